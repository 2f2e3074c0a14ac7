package io.github.tieredretry.sample;

import java.util.Map;

import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * Lets the demo end the payment provider's outage, so that parked orders can be replayed successfully:
 * {@code curl -X POST localhost:8080/demo/provider/heal}.
 */
@RestController
class PaymentProviderController {

	private final PaymentGateway gateway;

	PaymentProviderController(PaymentGateway gateway) {
		this.gateway = gateway;
	}

	@PostMapping("/demo/provider/heal")
	Map<String, String> heal() {
		this.gateway.heal();
		return Map.of("provider", "healed");
	}

}
