package io.github.tieredretry.kotlin

import io.github.tieredretry.annotation.RetryableListener
import io.github.tieredretry.headers.RetryHeaders
import io.github.tieredretry.testsupport.InvocationRecorder
import io.github.tieredretry.testsupport.Messages
import io.github.tieredretry.testsupport.RabbitIntegrationTest
import io.github.tieredretry.testsupport.Script
import io.github.tieredretry.testsupport.TestQueues
import kotlinx.coroutines.delay
import kotlinx.coroutines.withContext
import kotlinx.coroutines.Dispatchers
import org.assertj.core.api.Assertions.assertThat
import org.awaitility.Awaitility.await
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.extension.RegisterExtension
import org.springframework.amqp.core.Message
import org.springframework.amqp.core.Queue
import org.springframework.amqp.rabbit.annotation.RabbitListener
import org.springframework.beans.factory.annotation.Autowired
import org.springframework.boot.SpringBootConfiguration
import org.springframework.boot.autoconfigure.EnableAutoConfiguration
import org.springframework.boot.test.context.SpringBootTest
import org.springframework.context.annotation.Bean
import org.springframework.test.context.DynamicPropertyRegistry
import org.springframework.test.context.DynamicPropertySource
import java.time.Duration
import java.util.concurrent.CopyOnWriteArrayList

/**
 * Kotlin `suspend` listeners on the real broker: Spring AMQP runs them as a `Mono`, and
 * the starter follows it like any asynchronous listener. A failure after a suspension
 * (on whichever thread resumed the coroutine) or before the first one is a failed
 * attempt, retried or parked; an attempt that outlives `retry.async.attempt-timeout` is
 * cancelled, which cancels the coroutine.
 */
@SpringBootTest
@RabbitIntegrationTest
class SuspendListenerIntegrationTests {

	companion object {

		@JvmField
		@RegisterExtension
		val queues: TestQueues = TestQueues.prefixed("suspend")

		val topology: TestQueues.Topology = queues.topology()

		val QUEUE: String = queues.name("work")

		@JvmStatic
		@DynamicPropertySource
		fun properties(registry: DynamicPropertyRegistry) {
			registry.add("test.queue") { QUEUE }
			registry.add("retry.parking-lot") { topology.parkingLot() }
			registry.add("retry.tiers") { topology.tiers() }
			registry.add("retry.defaults.max-retries") { "2" }
			registry.add("retry.defaults.delays") { "${topology.shortTier().toMillis()}ms" }
			registry.add("retry.async.attempt-timeout") { "700ms" }
		}

	}

	@Autowired
	lateinit var recorder: InvocationRecorder

	@Autowired
	lateinit var listener: SuspendListener

	@Test
	fun suspendListenerThatFailsTwiceIsRetriedTwiceAndThenProcessed() {
		val id = Messages.publish(queues.broker(), "", QUEUE, "fail:2")

		await().atMost(Duration.ofSeconds(15)).until { recorder.succeeded(id) }
		assertThat(recorder.of(id).map { it.retryCount() }).containsExactly(0L, 1L, 2L)
		assertThat(recorder.of(id)[1].header(RetryHeaders.EXCEPTION)).isEqualTo(IllegalStateException::class.java.name)
		assertThat(queues.parkingLot(topology.parkingLot()).find(id)).isNull()
	}

	@Test
	fun suspendListenerThatNeverSucceedsIsParkedWithItsLastFailure() {
		val id = Messages.publish(queues.broker(), "", QUEUE, "always")

		await().atMost(Duration.ofSeconds(15)).until { queues.parkingLot(topology.parkingLot()).find(id) != null }
		val parked = queues.parkingLot(topology.parkingLot()).single(id)
		assertThat(parked.header(RetryHeaders.PARKED_REASON)).isEqualTo("exhausted")
		assertThat(parked.header(RetryHeaders.ERROR)).isEqualTo("scripted failure 3")
		assertThat(recorder.count(id)).isEqualTo(3)
	}

	@Test
	fun failureBeforeTheFirstSuspensionIsAFailedAttemptToo() {
		val id = Messages.publish(queues.broker(), "", QUEUE, "throw-at-once-then-ok")

		await().atMost(Duration.ofSeconds(15)).until { recorder.succeeded(id) }
		assertThat(recorder.of(id).map { it.retryCount() }).containsExactly(0L, 1L)
	}

	@Test
	fun suspendListenerThatOutlivesTheAttemptTimeoutIsCancelledAndRetried() {
		val id = Messages.publish(queues.broker(), "", QUEUE, "hang-once")

		await().atMost(Duration.ofSeconds(15)).until { recorder.succeeded(id) }
		assertThat(recorder.of(id)[1].header(RetryHeaders.EXCEPTION))
			.isEqualTo("io.github.tieredretry.listener.AsyncAttemptTimeoutException")
		// The coroutine was cancelled, not left running.
		assertThat(listener.cancelled).containsExactly(id)
	}

	@SpringBootConfiguration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	class App {

		@Bean
		fun invocationRecorder() = InvocationRecorder()

		@Bean
		fun workQueue() = Queue(QUEUE)

		@Bean
		fun suspendListener(recorder: InvocationRecorder) = SuspendListener(recorder)

	}

	/**
	 * A listener that suspends as a call to a non-blocking client would, then runs the
	 * message's [Script]: `throw-at-once-then-ok` fails its first attempt before any
	 * suspension, `hang-once` suspends its first attempt for far longer than the attempt
	 * timeout.
	 */
	class SuspendListener(private val recorder: InvocationRecorder) {

		val cancelled: MutableList<String> = CopyOnWriteArrayList()

		@RabbitListener(queues = ["\${test.queue}"])
		@RetryableListener
		suspend fun onMessage(message: Message) {
			val id = checkNotNull(message.messageProperties.messageId) { "the test messages have ids" }
			val script = String(message.body)
			val first = recorder.count(id) == 0
			if (script == "throw-at-once-then-ok") {
				recorder.record(message, !first)
				check(!first) { "failed before suspending" }
				return
			}
			if (script == "hang-once" && first) {
				recorder.record(message, false)
				try {
					delay(60_000)
				}
				finally {
					cancelled.add(id)
				}
			}
			if (script == "hang-once") {
				recorder.record(message, true)
				return
			}
			delay(10)
			withContext(Dispatchers.IO) {
				Script.run(message, recorder)
			}
		}

	}

}
