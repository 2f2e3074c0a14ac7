package io.github.tieredretry.sample;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageBuilder;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.ApplicationArguments;
import org.springframework.boot.ApplicationRunner;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.stereotype.Component;

/**
 * Publishes a batch of demo orders when the application starts: mostly healthy ones, some
 * with a flaky payment, some that never succeed, one suspected fraud and one malformed
 * payload.
 */
@Component
@ConditionalOnBooleanProperty(name = "sample.demo.enabled", matchIfMissing = true)
public class DemoOrders implements ApplicationRunner {

	private static final Logger logger = LoggerFactory.getLogger(DemoOrders.class);

	private final RabbitTemplate rabbitTemplate;

	private final String queue;

	public DemoOrders(RabbitTemplate rabbitTemplate,
			@Value("${" + SampleTopology.ORDERS_QUEUE_PROPERTY + ":orders}") String queue) {
		this.rabbitTemplate = rabbitTemplate;
		this.queue = queue;
	}

	/**
	 * The demo orders, by customer kind.
	 * @param run a prefix that makes this run's order ids unique
	 * @return the orders
	 */
	public static List<Order> orders(String run) {
		List<Order> orders = new ArrayList<>();
		for (int i = 1; i <= 12; i++) {
			orders.add(new Order(run + "-" + i, "alice-" + i, BigDecimal.valueOf(10 + i)));
		}
		orders.add(new Order(run + "-13", "flaky-bob", new BigDecimal("99.90")));
		orders.add(new Order(run + "-14", "flaky-carol", new BigDecimal("15.00")));
		orders.add(new Order(run + "-15", "broke-dave", new BigDecimal("250.00")));
		orders.add(new Order(run + "-16", "fraud-eve", new BigDecimal("9999.00")));
		return orders;
	}

	@Override
	public void run(ApplicationArguments args) {
		publish("o" + (System.currentTimeMillis() % 100_000));
	}

	/**
	 * Publish the demo orders and one malformed payload, with message ids {@code <run>-1}
	 * to {@code <run>-17}.
	 * @param run a prefix that makes this run's message ids unique
	 */
	public void publish(String run) {
		List<Order> orders = orders(run);
		orders.forEach((order) -> this.rabbitTemplate.convertAndSend(this.queue, order,
				(message) -> withId(message, order.orderId())));
		Message malformed = MessageBuilder.withBody("{\"orderId\": 17, \"amount\": ".getBytes(StandardCharsets.UTF_8))
			.setContentType(MessageProperties.CONTENT_TYPE_JSON)
			.setMessageId(run + "-17")
			.build();
		this.rabbitTemplate.send(this.queue, malformed);
		logger.info("Published {} demo orders and 1 malformed payload to '{}' (run {}). Watch them: GET "
				+ "http://localhost:8080/actuator/retry", orders.size(), this.queue, run);
	}

	private static Message withId(Message message, String orderId) {
		message.getMessageProperties().setMessageId(orderId);
		return message;
	}

}
