package io.github.tieredretry.sample;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.springframework.stereotype.Component;

/**
 * The orders that were paid.
 */
@Component
public class OrderLedger {

	private final Set<String> paid = ConcurrentHashMap.newKeySet();

	void paid(String orderId) {
		this.paid.add(orderId);
	}

	public boolean isPaid(String orderId) {
		return this.paid.contains(orderId);
	}

	public int paidCount() {
		return this.paid.size();
	}

}
