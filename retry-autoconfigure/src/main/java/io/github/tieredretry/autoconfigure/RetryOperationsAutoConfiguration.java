package io.github.tieredretry.autoconfigure;

import java.time.Clock;
import java.time.Duration;

import com.rabbitmq.client.Channel;
import io.github.tieredretry.internal.console.OperatorActions;
import io.github.tieredretry.internal.console.RetryOverview;
import io.github.tieredretry.internal.console.RetryTrends;
import io.github.tieredretry.internal.delayedsend.ScheduledCounts;
import io.github.tieredretry.internal.event.RetryEventPublisher;
import io.github.tieredretry.internal.forwarding.MessageForwarder;
import io.github.tieredretry.internal.install.RetryBackends;
import io.github.tieredretry.internal.metrics.RetryQueueDepths;
import io.github.tieredretry.internal.parkinglot.DefaultParkingLotService;
import io.github.tieredretry.internal.parkinglot.ParkingLotRetention;
import io.github.tieredretry.internal.parkinglot.SharedParkingLotAdoption;
import io.github.tieredretry.internal.topology.RetryTopology;
import io.github.tieredretry.listener.ListenerGates;
import io.github.tieredretry.listener.RetryableListenerRegistry;
import io.github.tieredretry.observation.RetryObservations;
import io.github.tieredretry.parkinglot.ParkingLotService;
import io.github.tieredretry.parkinglot.ReplaySettings;
import io.github.tieredretry.parkinglot.RetentionLimits;

import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.ApplicationListener;
import org.springframework.context.annotation.Bean;

/**
 * Auto-configuration of the operations on the retry queues that metrics, health and the
 * {@code retry} endpoint build on, and that applications may use directly: cached queue
 * depths and the parking-lot service (peek, group, replay at a limited rate, purge), and
 * the overview of the retry set-up.
 */
@AutoConfiguration(after = TieredRetryAutoConfiguration.class)
@ConditionalOnClass({ RabbitTemplate.class, Channel.class })
@ConditionalOnBean({ RetryTopology.class, MessageForwarder.class, RetryableListenerRegistry.class })
public final class RetryOperationsAutoConfiguration {

	// How often the shared parking lot is looked at for this application's messages (only
	// read again when its depth changed).
	private static final Duration ADOPTION_CHECK_INTERVAL = Duration.ofMinutes(1);

	@Bean
	@ConditionalOnMissingBean
	RetryQueueDepths retryQueueDepths(ConnectionFactory connectionFactory, RetryTopology topology) {
		return new RetryQueueDepths(connectionFactory, topology, RetryQueueDepths.DEFAULT_MAX_AGE, Clock.systemUTC());
	}

	@Bean
	@ConditionalOnMissingBean
	ParkingLotService retryParkingLotService(ConnectionFactory connectionFactory, RetryTopology topology,
			MessageForwarder forwarder, RetryProperties properties, ObjectProvider<RetryObservations> observations,
			RetryEventPublisher events) {
		return new DefaultParkingLotService(connectionFactory, topology.parkingLot(), forwarder,
				replaySettings(properties), observations.getIfAvailable(() -> RetryObservations.DISABLED), events,
				Clock.systemUTC());
	}

	@Bean
	@ConditionalOnMissingBean
	RetryOverview retryOverview(RetryTopology topology, RetryableListenerRegistry listeners, RetryQueueDepths depths,
			ParkingLotService parkingLot, ObjectProvider<ListenerGates> breakers,
			ObjectProvider<RetryBackends> backends, RetryTrends trends, ObjectProvider<ScheduledCounts> scheduled) {
		return new RetryOverview(topology, listeners, depths, parkingLot,
				breakers.getIfAvailable(() -> ListenerGates.WITHOUT_BREAKERS), backends.getIfAvailable(), trends,
				scheduled.getIfAvailable());
	}

	@Bean
	@ConditionalOnMissingBean
	RetryTrends retryTrends() {
		return new RetryTrends(Clock.systemUTC());
	}

	@Bean(destroyMethod = "close")
	@ConditionalOnMissingBean
	ParkingLotRetention retryParkingLotRetention(ParkingLotService parkingLot, RetryProperties properties,
			ApplicationEventPublisher events) {
		return new ParkingLotRetention(parkingLot, retentionLimits(properties), retentionCheckInterval(properties),
				events);
	}

	@Bean
	ApplicationListener<ApplicationReadyEvent> retryParkingLotRetentionStart(ParkingLotRetention retention) {
		// Once the application is ready: the parking lot is declared, and the listeners
		// that count and audit removals are registered.
		return (ready) -> retention.start();
	}

	@Bean(destroyMethod = "close")
	@ConditionalOnMissingBean
	@ConditionalOnBooleanProperty(name = "retry.adopt-shared-parking-lot", matchIfMissing = true)
	SharedParkingLotAdoption retrySharedParkingLotAdoption(ConnectionFactory connectionFactory, RetryTopology topology,
			MessageForwarder forwarder) {
		return new SharedParkingLotAdoption(connectionFactory, topology.parkingLot(), forwarder, topology::workQueues,
				ADOPTION_CHECK_INTERVAL);
	}

	@Bean
	ApplicationListener<ApplicationReadyEvent> retrySharedParkingLotAdoptionStart(
			ObjectProvider<SharedParkingLotAdoption> adoption) {
		// Once the application is ready: every listener has registered its queue.
		return (ready) -> adoption.ifAvailable(SharedParkingLotAdoption::start);
	}

	static RetentionLimits retentionLimits(RetryProperties properties) {
		RetryProperties.Retention retention = properties.getRetention();
		Duration maxAge = retention.getMaxAge();
		if (maxAge != null && (maxAge.isNegative() || maxAge.isZero())) {
			throw new InvalidConfigurationPropertyValueException("retry.retention.max-age", maxAge,
					"Use a positive duration, such as 30d or 12h, or leave it unset to keep parked messages forever.");
		}
		Long maxCount = retention.getMaxCount();
		if (maxCount != null && maxCount < 0) {
			throw new InvalidConfigurationPropertyValueException("retry.retention.max-count", maxCount,
					"Use 0 or more messages, such as 10000, or leave it unset to keep every parked message.");
		}
		return new RetentionLimits(maxAge, maxCount);
	}

	static Duration retentionCheckInterval(RetryProperties properties) {
		Duration interval = properties.getRetention().getCheckInterval();
		if (interval == null || interval.isNegative() || interval.isZero()) {
			throw new InvalidConfigurationPropertyValueException("retry.retention.check-interval", interval,
					"Use a positive duration, such as 1m (the default).");
		}
		return interval;
	}

	@Bean
	@ConditionalOnMissingBean
	OperatorActions retryOperatorActions(ParkingLotService parkingLot, RetryOverview overview,
			ApplicationEventPublisher events) {
		return new OperatorActions(parkingLot, overview, events);
	}

	static ReplaySettings replaySettings(RetryProperties properties) {
		RetryProperties.Replay replay = properties.getReplay();
		if (!(replay.getRate() > 0) || Double.isInfinite(replay.getRate())) {
			throw new InvalidConfigurationPropertyValueException("retry.replay.rate", replay.getRate(),
					"Use a positive number of messages per second, such as 50 or 0.5.");
		}
		if (replay.getBatchSize() < 1) {
			throw new InvalidConfigurationPropertyValueException("retry.replay.batch-size", replay.getBatchSize(),
					"Use 1 or more messages per pass (default 100).");
		}
		return new ReplaySettings(replay.getRate(), replay.getBatchSize());
	}

}
