package io.github.tieredretry.sample;

import java.math.BigDecimal;
import java.util.Map;

import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * Switches for the demo: end the payment provider's outage, so that parked orders can be
 * replayed successfully ({@code curl -X POST localhost:8080/demo/provider/heal}); take
 * the whole provider down ({@code curl -X POST localhost:8080/demo/provider/outage}) and
 * send a burst of orders ({@code curl -X POST 'localhost:8080/demo/orders?count=40'}) to
 * watch the circuit breaker pause the listener.
 */
@RestController
class PaymentProviderController {

	private final PaymentGateway gateway;

	private final RabbitTemplate rabbitTemplate;

	private final String queue;

	PaymentProviderController(PaymentGateway gateway, RabbitTemplate rabbitTemplate,
			@Value("${" + SampleTopology.ORDERS_QUEUE_PROPERTY + ":orders}") String queue) {
		this.gateway = gateway;
		this.rabbitTemplate = rabbitTemplate;
		this.queue = queue;
	}

	@PostMapping("/demo/provider/outage")
	Map<String, String> outage() {
		this.gateway.startOutage();
		return Map.of("provider", "down");
	}

	@PostMapping("/demo/orders")
	Map<String, Object> orders(@RequestParam(defaultValue = "40") int count) {
		String run = "b" + (System.currentTimeMillis() % 100_000);
		for (int i = 1; i <= count; i++) {
			String orderId = run + "-" + i;
			this.rabbitTemplate.convertAndSend(this.queue, new Order(orderId, "alice-" + i, BigDecimal.TEN),
					(message) -> {
						message.getMessageProperties().setMessageId(orderId);
						return message;
					});
		}
		return Map.of("published", count, "run", run);
	}

	@PostMapping("/demo/provider/heal")
	Map<String, String> heal() {
		this.gateway.heal();
		return Map.of("provider", "healed");
	}

}
