package io.github.tieredretry.forwarding;

import java.time.Duration;
import java.util.UUID;

import com.rabbitmq.client.AMQP;
import io.github.tieredretry.testsupport.BrokerClient;
import io.github.tieredretry.testsupport.TestBroker;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * {@link ConfirmedPublisher} against a real broker: confirmed, returned, and refused for a missing exchange.
 */
class ConfirmedPublisherIntegrationTests {

	final String queue = "publisher-" + UUID.randomUUID();

	CachingConnectionFactory connectionFactory;

	ConfirmedPublisher publisher;

	BrokerClient broker;

	@BeforeEach
	void setUp() {
		this.broker = new BrokerClient();
		this.broker.declareQueue(this.queue);
		TestBroker testBroker = TestBroker.get();
		this.connectionFactory = new CachingConnectionFactory(testBroker.clientConnectionFactory());
		this.connectionFactory.setPublisherConfirmType(CachingConnectionFactory.ConfirmType.SIMPLE);
		this.publisher = new ConfirmedPublisher(this.connectionFactory, Duration.ofSeconds(5));
	}

	@AfterEach
	void tearDown() {
		this.broker.deleteQueue(this.queue);
		this.broker.close();
		this.connectionFactory.destroy();
	}

	@Test
	void confirmedPublishArrivesInTheQueue() {
		this.publisher.publish("", this.queue, new AMQP.BasicProperties(), "x".getBytes());
		assertThat(this.broker.count(this.queue)).isEqualTo(1);
	}

	@Test
	void unroutablePublishFailsAsReturned() {
		assertThatExceptionOfType(ForwardFailedException.class)
			.isThrownBy(() -> this.publisher.publish("", "no-such-queue-" + UUID.randomUUID(),
					new AMQP.BasicProperties(), "x".getBytes()))
			.satisfies((ex) -> assertThat(ex.getKind()).isEqualTo(ForwardFailedException.Kind.RETURNED));
	}

	@Test
	void publishToAMissingExchangeFailsAsMissingExchangeAndTheNextPublishWorks() {
		assertThatExceptionOfType(ForwardFailedException.class)
			.isThrownBy(() -> this.publisher.publish("no-such-exchange-" + UUID.randomUUID(), this.queue,
					new AMQP.BasicProperties(), "x".getBytes()))
			.satisfies((ex) -> assertThat(ex.getKind()).isEqualTo(ForwardFailedException.Kind.MISSING_EXCHANGE));
		this.publisher.publish("", this.queue, new AMQP.BasicProperties(), "y".getBytes());
		assertThat(this.broker.count(this.queue)).isEqualTo(1);
	}

}
