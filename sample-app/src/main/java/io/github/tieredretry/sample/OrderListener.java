package io.github.tieredretry.sample;

import io.github.tieredretry.annotation.RetryableListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.amqp.support.AmqpHeaders;
import org.springframework.messaging.handler.annotation.Header;
import org.springframework.stereotype.Component;

/**
 * Pays incoming orders. A failed payment is retried later through the delay tiers; the
 * consumer thread never sleeps, so healthy orders keep flowing while failed ones wait.
 */
@Component
public class OrderListener {

	private static final Logger logger = LoggerFactory.getLogger(OrderListener.class);

	private final PaymentGateway gateway;

	private final OrderLedger ledger;

	public OrderListener(PaymentGateway gateway, OrderLedger ledger) {
		this.gateway = gateway;
		this.ledger = ledger;
	}

	@RabbitListener(queues = "${" + SampleTopology.ORDERS_QUEUE_PROPERTY + ":orders}")
	@RetryableListener(policy = "payments")
	void onOrder(Order order, @Header(AmqpHeaders.RETRY_COUNT) long retryCount) {
		String attempt = (retryCount == 0) ? "first attempt" : "retry " + retryCount;
		try {
			this.gateway.charge(order);
		}
		catch (RuntimeException ex) {
			logger.info("Order {} ({}): payment failed on {}: {}", order.orderId(), order.customer(), attempt,
					ex.getMessage());
			throw ex;
		}
		this.ledger.paid(order.orderId());
		logger.info("Order {} ({}): paid {} on {}", order.orderId(), order.customer(), order.amount(), attempt);
	}

}
