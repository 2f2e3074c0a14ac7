package io.github.tieredretry.autoconfigure;

import java.time.Duration;
import java.util.List;

import io.github.tieredretry.listener.RetryableListenerInfo;
import io.github.tieredretry.listener.RetryableListenerRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.amqp.core.MessageProperties;
import org.springframework.amqp.rabbit.batch.BatchingStrategy;
import org.springframework.amqp.rabbit.listener.RabbitListenerEndpointRegistry;
import org.springframework.amqp.rabbit.listener.SimpleMessageListenerContainer;
import org.springframework.beans.DirectFieldAccessor;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.core.NestedExceptionUtils;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for applying {@code @RetryableListener} to listener containers: which are
 * wrapped, which policy applies, and every listener set-up that is refused at startup
 * with the reason and the fix.
 */
class RetryableListenerInstallationTests extends AutoConfigurationTestSupport {

	@Test
	void retryableListenerIsWrappedAndUnannotatedListenerIsUntouched() {
		this.contextRunner.withUserConfiguration(OrderListener.class, PlainListener.class).run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(listenerTypeOf(context, "orders")).isEqualTo("RetryingMessageListener");
			assertThat(listenerTypeOf(context, "plain")).isNotEqualTo("RetryingMessageListener");
			List<RetryableListenerInfo> listeners = context.getBean(RetryableListenerRegistry.class).listeners();
			assertThat(listeners).singleElement().satisfies((info) -> {
				assertThat(info.listener()).isEqualTo("AutoConfigurationTestSupport.OrderListener#onOrder");
				assertThat(info.queues()).containsExactly("orders");
				assertThat(info.policyName()).isEmpty();
			});
		});
	}

	@Test
	@ExtendWith(OutputCaptureExtension.class)
	void startupLineNamesThePolicyTheTiersAndTheBreakerSettings(CapturedOutput output) {
		this.contextRunner
			.withPropertyValues("retry.tiers=1s,5s", "retry.defaults.max-retries=2", "retry.defaults.delays=1s,5s",
					"retry.defaults.breaker.enabled=true", "retry.defaults.breaker.failure-rate-threshold=80",
					"retry.defaults.breaker.wait-in-open-state=10s")
			.withUserConfiguration(OrderListener.class)
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(output).contains("Tiered retries for AutoConfigurationTestSupport.OrderListener#onOrder on "
						+ "[orders]: EffectiveRetryPolicy[max-retries=2, delays=[1s, 5s], immediate-retries=0], "
						+ "tiers [1s, 5s], breaker[failure-rate-threshold=80%, sliding-window-size=20, "
						+ "minimum-calls=10, wait-in-open-state=10s, probes-in-half-open-state=3]");
			});
	}

	@Test
	@ExtendWith(OutputCaptureExtension.class)
	void startupLineSaysWhenAListenerHasNoBreaker(CapturedOutput output) {
		this.contextRunner.withPropertyValues("retry.tiers=1s,5s", "retry.defaults.delays=1s")
			.withUserConfiguration(OrderListener.class)
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(output).contains("Tiered retries for AutoConfigurationTestSupport.OrderListener#onOrder on "
						+ "[orders]: EffectiveRetryPolicy[max-retries=5, delays=[1s], immediate-retries=0], "
						+ "tiers [1s, 5s], no breaker");
			});
	}

	@Test
	void retryableListenerOnTheDirectContainerIsWrapped() {
		this.contextRunner.withPropertyValues("spring.rabbitmq.listener.type=direct")
			.withUserConfiguration(OrderListener.class)
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(listenerTypeOf(context, "orders")).isEqualTo("RetryingMessageListener");
			});
	}

	@Test
	void classLevelRetryableListenerAppliesToTheClassLevelRabbitListener() {
		this.contextRunner.withUserConfiguration(ClassLevelListener.class).run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context.getBean(RetryableListenerRegistry.class).listeners()).singleElement()
				.satisfies((info) -> {
					assertThat(info.listener()).isEqualTo("AutoConfigurationTestSupport.ClassLevelListener");
					assertThat(info.method()).isNull();
				});
		});
	}

	@Test
	void listenerPolicyTakesAnnotationThenNamedPolicyThenDefaults() {
		this.contextRunner
			.withPropertyValues("retry.defaults.max-retries=7", "retry.defaults.timeout=1h",
					"retry.policies.payments.delays=10s,100s", "retry.policies.payments.max-retries=9")
			.withUserConfiguration(PaymentListener.class)
			.run((context) -> {
				assertThat(context).hasNotFailed();
				RetryableListenerInfo info = context.getBean(RetryableListenerRegistry.class).listeners().get(0);
				assertThat(info.policyName()).isEqualTo("payments");
				assertThat(info.policy().maxRetries()).isEqualTo(2);
				assertThat(info.policy().delays()).containsExactly(Duration.ofSeconds(10), Duration.ofSeconds(100));
				assertThat(info.policy().timeout()).isEqualTo(Duration.ofHours(1));
			});
	}

	@Test
	void unknownPolicyNameFailsStartupNamingTheListenerAndThePolicy() {
		this.contextRunner.withPropertyValues("retry.policies.payments.max-retries=3")
			.withUserConfiguration(UnknownPolicyListener.class)
			.run(failsWith("UnknownPolicyListener#onOrder", "unknown policy 'paymnets'", "[payments]"));
	}

	@Test
	void unparsableDelayFailsStartupNamingTheListenerAndTheDelay() {
		this.contextRunner.withUserConfiguration(UnparsableDelayListener.class)
			.run(failsWith("UnparsableDelayListener#onOrder", "delay \"10 parsecs\" is not a duration"));
	}

	@Test
	void delayWithoutAUnitFailsStartupShowingBothReadings() {
		this.contextRunner.withUserConfiguration(UnitlessDelayListener.class)
			.run(failsWith("UnitlessDelayListener#onOrder", "delay \"10\" has no unit",
					"Write \"10ms\" for milliseconds or \"10s\" for seconds"));
	}

	@Test
	void negativeDelayFailsStartupNamingTheListenerAndTheDelay() {
		this.contextRunner.withUserConfiguration(NegativeDelayListener.class)
			.run(failsWith("NegativeDelayListener#onOrder", "delay \"-5s\" is not usable",
					"Use delays of zero or more"));
	}

	@Test
	void negativeMaxRetriesFailsStartupNamingTheListenerAndTheValue() {
		this.contextRunner.withUserConfiguration(NegativeMaxRetriesListener.class)
			.run(failsWith("NegativeMaxRetriesListener#onOrder", "maxRetries = -2 is not usable",
					"Or -1 (the default)"));
	}

	@Test
	void jitterOutsideZeroToOneOnTheAnnotationFailsStartupNamingTheListenerAndTheValue() {
		this.contextRunner.withUserConfiguration(TooMuchJitterListener.class)
			.run(failsWith("TooMuchJitterListener#onOrder", "jitter = 1.5 is not usable",
					"Use a factor from 0 to 1, such as 0.2", "Or -1 (the default)"));
	}

	@Test
	void jitterIsInheritedFromThePolicyUnlessTheAnnotationSetsIt() {
		this.contextRunner.withPropertyValues("retry.defaults.jitter=0.2", "retry.policies.payments.jitter=0.5")
			.withUserConfiguration(PaymentListener.class, OrderListener.class)
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context.getBean(RetryableListenerRegistry.class).listeners())
					.extracting((info) -> info.policy().jitter())
					.containsExactlyInAnyOrder(0.5, 0.2);
			});
		this.contextRunner.withPropertyValues("retry.policies.payments.jitter=0.5")
			.withUserConfiguration(ExactPaymentListener.class)
			.run((context) -> assertThat(context.getBean(RetryableListenerRegistry.class).listeners()).singleElement()
				.satisfies((info) -> assertThat(info.policy().jitter()).isZero()));
	}

	@Test
	@ExtendWith(OutputCaptureExtension.class)
	void startupLineShowsTheJitter(CapturedOutput output) {
		this.contextRunner
			.withPropertyValues("retry.tiers=1s,5s", "retry.defaults.delays=5s", "retry.defaults.jitter=0.2")
			.withUserConfiguration(OrderListener.class)
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(output).contains("[orders]: EffectiveRetryPolicy[max-retries=5, delays=[5s], jitter=0.2, "
						+ "immediate-retries=0], tiers [1s, 5s]");
			});
	}

	@Test
	@ExtendWith(OutputCaptureExtension.class)
	void jitterThatTheTiersCannotExpressIsReportedAtStartupForTheListener(CapturedOutput output) {
		this.contextRunner
			.withPropertyValues("retry.tiers=1s,5s", "retry.defaults.delays=200ms, 10s", "retry.defaults.jitter=0.2")
			.withUserConfiguration(OrderListener.class)
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(output).contains("AutoConfigurationTestSupport.OrderListener#onOrder: the tiers cannot "
						+ "spread retry 1 after 200ms (jitter 0.2: drawn between 160ms and 240ms): every draw waits "
						+ "1s, so messages that fail together are retried together and the jitter has no effect. The "
						+ "tiers serve a delay to within the smallest tier (1s); add a tier shorter than the spread of "
						+ "80ms to retry.tiers, or use a longer delay or more jitter.");
			});
	}

	@Test
	@ExtendWith(OutputCaptureExtension.class)
	void jitterWhoseDrawsTheTiersServeInAFewWavesOnlyIsReported(CapturedOutput output) {
		this.contextRunner
			.withPropertyValues("retry.tiers=1s,5s", "retry.defaults.delays=1s", "retry.defaults.jitter=0.2")
			.withUserConfiguration(OrderListener.class)
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(output)
					.contains("OrderListener#onOrder: the tiers cannot spread retries 1-5 after 1s (jitter "
							+ "0.2: drawn between 800ms and 1200ms): draws wait 1s or 2s only, so messages that fail "
							+ "together are retried in 2 waves.");
			});
	}

	@Test
	@ExtendWith(OutputCaptureExtension.class)
	void jitterTheTiersCanServeIsNotReported(CapturedOutput output) {
		this.contextRunner
			.withPropertyValues("retry.tiers=1s,5s", "retry.defaults.delays=4s, 10s", "retry.defaults.jitter=0.5")
			.withUserConfiguration(OrderListener.class)
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(output).contains("Tiered retries for AutoConfigurationTestSupport.OrderListener#onOrder")
					.doesNotContain("cannot spread")
					.doesNotContain("late by")
					.doesNotContain("for a single hop");
			});
	}

	@Test
	@ExtendWith(OutputCaptureExtension.class)
	void everyRetryThatHopsIsNamedOnceInOneStartupNotice(CapturedOutput output) {
		this.contextRunner
			.withPropertyValues("retry.tiers=1s,5s", "retry.defaults.delays=2s, 2s, 5s, 7s",
					"retry.defaults.max-retries=6", "retry.defaults.backend=tiers")
			.withUserConfiguration(OrderListener.class)
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(output).containsOnlyOnce("OrderListener#onOrder: retries 1 and 2 after 2s go through tiers "
						+ "[1s, 1s]; add 2s to retry.tiers for a single hop.");
			});
		this.contextRunner
			.withPropertyValues("retry.tiers=1s,5s", "retry.defaults.delays=2s, 5s, 3s", "retry.defaults.max-retries=6",
					"retry.defaults.backend=tiers")
			.withUserConfiguration(OrderListener.class)
			.run((context) -> assertThat(output).containsOnlyOnce("OrderListener#onOrder: retry 1 after 2s goes "
					+ "through tiers [1s, 1s]; retries 3-6 after 3s go through tiers [1s, 1s, 1s]; add 2s, 3s to "
					+ "retry.tiers for a single hop each."));
	}

	@Test
	@ExtendWith(OutputCaptureExtension.class)
	void tierNoticeOfAListenerTheBrokerMayServeWaitsForTheBackendChoice(CapturedOutput output) {
		// No broker here: the choice is never made, so nothing is said about tiers that
		// may not run (linear delays on a quorum queue may run on the broker backend).
		this.contextRunner.withPropertyValues("retry.tiers=1s,5s", "retry.defaults.delays=2s")
			.withUserConfiguration(OrderListener.class)
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(output).contains("Tiered retries for AutoConfigurationTestSupport.OrderListener#onOrder")
					.doesNotContain("go through tiers")
					.doesNotContain("goes through tiers");
			});
	}

	@Test
	void manualAckModeOnTheAnnotationFailsStartupPointingAtTheAnnotation() {
		this.contextRunner.withUserConfiguration(ManualAckListener.class)
			.run(failsWith("ManualAckListener#onOrder",
					"acknowledge mode MANUAL, set by @RabbitListener(ackMode = \"MANUAL\"), is not supported",
					"Remove ackMode = \"MANUAL\" from the @RabbitListener"));
	}

	@Test
	void manualAckModeFromThePropertyFailsStartupPointingAtTheProperty() {
		this.contextRunner.withPropertyValues("spring.rabbitmq.listener.simple.acknowledge-mode=manual")
			.withUserConfiguration(OrderListener.class)
			.run((context) -> {
				failsWith("OrderListener#onOrder", "acknowledge mode MANUAL, set by its container factory",
						"Remove spring.rabbitmq.listener.simple.acknowledge-mode")
					.accept(context);
				assertThat(NestedExceptionUtils.getMostSpecificCause(context.getStartupFailure()))
					.hasMessageNotContaining("ackMode = ");
			});
	}

	@Test
	void noneAckModeFromTheDirectFactoryPropertyFailsStartupPointingAtTheProperty() {
		this.contextRunner
			.withPropertyValues("spring.rabbitmq.listener.type=direct",
					"spring.rabbitmq.listener.direct.acknowledge-mode=none")
			.withUserConfiguration(OrderListener.class)
			.run(failsWith("OrderListener#onOrder", "acknowledge mode NONE, set by its container factory",
					"Remove spring.rabbitmq.listener.direct.acknowledge-mode"));
	}

	@Test
	void transactedContainerFailsStartupNamingTheListener() {
		this.contextRunner.withUserConfiguration(TransactedListener.class)
			.run(failsWith("TransactedListener#onOrder", "transacted listener containers are not supported"));
	}

	@Test
	void noneAckModeFailsStartupNamingTheListener() {
		this.contextRunner.withUserConfiguration(NoAckListener.class)
			.run(failsWith("NoAckListener#onOrder",
					"acknowledge mode NONE, set by @RabbitListener(ackMode = \"NONE\"), is not supported"));
	}

	@Test
	void batchListenerIsWrappedByTheBatchWrapper() {
		this.contextRunner.withUserConfiguration(BatchListener.class).run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(listenerTypeOf(context, "batch")).isEqualTo("RetryingBatchMessageListener");
		});
	}

	@Test
	void consumerBatchListenerIsWrappedByTheBatchWrapperAndItsContainerSplitsNoProducerBatch() {
		this.contextRunner
			.withPropertyValues("spring.rabbitmq.listener.simple.consumer-batch-enabled=true",
					"spring.rabbitmq.listener.simple.batch-size=10")
			.withUserConfiguration(ConsumerBatchListener.class)
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(listenerTypeOf(context, "consumer-batch")).isEqualTo("RetryingBatchMessageListener");
				SimpleMessageListenerContainer container = (SimpleMessageListenerContainer) context
					.getBean(RabbitListenerEndpointRegistry.class)
					.getListenerContainer("consumer-batch");
				assertThat(container.isConsumerBatchEnabled()).isTrue();
				BatchingStrategy strategy = (BatchingStrategy) new DirectFieldAccessor(container)
					.getPropertyValue("batchingStrategy");
				MessageProperties producerBatch = new MessageProperties();
				producerBatch.setHeader(MessageProperties.SPRING_BATCH_FORMAT,
						MessageProperties.BATCH_FORMAT_LENGTH_HEADER4);
				assertThat(strategy.canDebatch(producerBatch)).isFalse();
			});
	}

	@Test
	void asynchronousListenersAreWrappedAndTheirResultsAreFollowedByTheStarter() {
		this.contextRunner.withUserConfiguration(AsyncListener.class, MonoListener.class).run((context) -> {
			assertThat(context).hasNotFailed();
			for (String id : List.of("async", "mono")) {
				Object wrapper = listenerOf(context, id);
				assertThat(wrapper.getClass().getSimpleName()).isEqualTo("RetryingMessageListener");
				// Pins the private fields of Spring AMQP's adapter that the capture
				// reads.
				Object adapter = new DirectFieldAccessor(wrapper).getPropertyValue("delegate");
				assertThat(new DirectFieldAccessor(adapter).getPropertyValue("handlerAdapter").getClass().getName())
					.endsWith("InvocationCapture$CapturingHandlerAdapter");
			}
		});
	}

	@Test
	void batchListenerThatReturnsAValueFailsStartupSayingWhy() {
		this.contextRunner.withUserConfiguration(ValueReturningBatchListener.class)
			.run(failsWith("ValueReturningBatchListener#onOrders", "batch listener that returns String"));
	}

	@Test
	void listenerReturningACompletionStageFailsStartupSayingItIsSentAsAReply() {
		this.contextRunner.withUserConfiguration(CompletionStageListener.class)
			.run(failsWith("CompletionStageListener#onOrder", "returns CompletionStage", "sends as a reply"));
	}

	@Test
	void listenerReturningAFluxFailsStartupSayingAStreamHasNoSingleOutcome() {
		this.contextRunner.withUserConfiguration(FluxListener.class)
			.run(failsWith("FluxListener#onOrder", "stream of values (Flux)"));
	}

	@Test
	void asynchronousListenerWithSendToFailsStartupSayingTheReplyWouldNotBeSent() {
		this.contextRunner.withUserConfiguration(AsyncReplyingListener.class)
			.run(failsWith("AsyncReplyingListener#onOrder", "asynchronous and has @SendTo"));
	}

	@Test
	void retryableListenerWithoutRabbitListenerFailsStartup() {
		this.contextRunner.withUserConfiguration(NotARabbitListener.class)
			.run(failsWith("NotARabbitListener#onOrder", "there is no @RabbitListener"));
	}

	@Test
	void retryableListenerOnARabbitHandlerFailsStartup() {
		this.contextRunner.withUserConfiguration(AnnotatedHandlerListener.class)
			.run(failsWith("AnnotatedHandlerListener#onOrder",
					"@RabbitHandler method of a class-level @RabbitListener"));
	}

	@Test
	void blockingRetryInterceptorOnTheSimpleFactoryFailsStartup() {
		this.contextRunner.withPropertyValues("spring.rabbitmq.listener.simple.retry.enabled=true")
			.withUserConfiguration(OrderListener.class)
			.run(failsWith("OrderListener#onOrder", "blocking retry interceptor",
					"spring.rabbitmq.listener.simple.retry.enabled=false"));
	}

	@Test
	void blockingRetryInterceptorOnTheDirectFactoryFailsStartup() {
		this.contextRunner
			.withPropertyValues("spring.rabbitmq.listener.type=direct",
					"spring.rabbitmq.listener.direct.retry.enabled=true")
			.withUserConfiguration(OrderListener.class)
			.run(failsWith("OrderListener#onOrder", "blocking retry interceptor"));
	}

	@Test
	void listenerOfAFinalContainerFactoryFailsStartupInsteadOfRunningWithoutRetries() {
		this.contextRunner.withUserConfiguration(FinalFactoryConfiguration.class, FinalFactoryListener.class)
			.run(failsWith("FinalFactoryListener#onOrder", "not created by a container factory bean"));
	}

}
