package io.github.tieredretry.testsupport;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

import io.github.tieredretry.internal.topology.RetryTopology;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Queue names of one test class, unique on the shared broker, with a plain AMQP client
 * per test; every queue named here, and every {@link #topology() retry topology} handed
 * out, is deleted after the class, once its application has closed. Register it as a
 * static field, before the constants that use it, with the settings of the class's
 * application: <pre class="code">
 * &#64;RegisterExtension
 * static final TestQueues queues = TestQueues.prefixed("routing")
 * 	.settings((settings) -&gt; settings.quorumTiers("190ms").retries(1, "190ms"));
 * static final String QUEUE = queues.name("work");
 * </pre> The Spring test framework gives the application of a {@code @SpringBootTest}
 * class that declares settings its {@link #applicationProperties() properties} through
 * {@link TestQueuesContextCustomizerFactory}.
 */
public final class TestQueues implements BeforeEachCallback, AfterEachCallback, AfterAllCallback {

	/**
	 * Tiers handed out in this JVM by {@link #topology()}: two test classes must never
	 * share (and delete) one.
	 */
	private static final Set<Long> takenTiers = ConcurrentHashMap.newKeySet();

	private final String prefix;

	private final String id = UUID.randomUUID().toString().substring(0, 8);

	private final Set<String> names = ConcurrentHashMap.newKeySet();

	/** The names handed out by {@link #name(String)}, by role, in order. */
	private final Map<String, String> roles = new LinkedHashMap<>();

	private BrokerClient broker;

	private final Map<String, ParkingLot> parkingLots = new ConcurrentHashMap<>();

	private final AtomicInteger topologies = new AtomicInteger();

	private final List<Consumer<RetrySettings>> settings = new CopyOnWriteArrayList<>();

	private TestQueues(String prefix) {
		this.prefix = prefix;
	}

	public static TestQueues prefixed(String prefix) {
		return new TestQueues(prefix);
	}

	/**
	 * A queue name unique to this test class run, deleted after the class.
	 * @param role what the queue is for
	 * @return the name
	 */
	public String name(String role) {
		String name = this.prefix + "-" + role + "-" + this.id;
		this.names.add(name);
		synchronized (this.roles) {
			this.roles.put(role, name);
		}
		return name;
	}

	/**
	 * The properties that name this class's queues to its application:
	 * {@code test.queues.<role>} for every {@link #name(String) name} handed out so far,
	 * and {@code test.id} for the {@link #id() id}.
	 * @return property name to value
	 */
	public Map<String, String> properties() {
		Map<String, String> properties = new LinkedHashMap<>();
		properties.put("test.id", this.id);
		synchronized (this.roles) {
			this.roles.forEach((role, name) -> properties.put("test.queues." + role, name));
		}
		return properties;
	}

	/**
	 * Settings of the class's application, besides its queue names: applied when the
	 * Spring test framework builds the application's context, after the class's constants
	 * are initialized. A static field of the class declared after this one cannot be
	 * named in an initializer of this field; settings that use one are declared in a
	 * static initializer after it: <pre class="code">
	 * static final TestQueues.Topology topology = queues.topology();
	 * static {
	 * 	queues.settings((settings) -&gt; settings.topology(topology));
	 * }
	 * </pre>
	 * @param settings what to set, on the settings of
	 * {@link RetrySettings#of(TestQueues)}
	 * @return this instance
	 */
	public TestQueues settings(Consumer<RetrySettings> settings) {
		this.settings.add(settings);
		return this;
	}

	/**
	 * Whether the class declared {@link #settings settings}, and so gives its application
	 * the {@link #applicationProperties() properties}.
	 * @return whether it did
	 */
	boolean declaresSettings() {
		return !this.settings.isEmpty();
	}

	/**
	 * The properties of the class's application: those of
	 * {@link RetrySettings#of(TestQueues)}, with the {@link #settings settings} declared.
	 * @return property name to value, in a new map
	 */
	public Map<String, Object> applicationProperties() {
		RetrySettings settings = RetrySettings.of(this);
		this.settings.forEach((declared) -> declared.accept(settings));
		return settings.toMap();
	}

	/**
	 * A queue whose name is fixed (a tier queue, say) but which this class alone uses:
	 * deleted after the class like the others, so that no test leaves it behind on the
	 * shared broker.
	 * @param name the queue's name
	 * @return the name
	 */
	public String owned(String name) {
		this.names.add(name);
		return name;
	}

	/**
	 * A retry topology that belongs to this class alone, deleted after the class like its
	 * queues: a parking lot of its own and two delay tiers with odd millisecond values
	 * (e.g. 437ms and 2437ms) that nobody else declares and that do not exist yet. Tier
	 * queue names are global on a virtual host: with these, a test may delete a tier
	 * queue or declare it as another queue type without disturbing anybody's retries.
	 * Each call gives another topology.
	 * @return the topology
	 */
	public Topology topology() {
		long millis;
		try (BrokerClient client = new BrokerClient()) {
			do {
				// Never a round number, so never somebody else's tier.
				millis = ThreadLocalRandom.current().nextLong(301, 1300);
			}
			while (millis % 10 == 0 || !takenTiers.add(millis)
					|| client.queueExists(RetryTopology.tierQueueName(Duration.ofMillis(millis)))
					|| client.queueExists(RetryTopology.tierQueueName(Duration.ofMillis(2000 + millis))));
		}
		Topology topology = new Topology(Duration.ofMillis(millis), Duration.ofMillis(2000 + millis),
				name("parking-lot-" + this.topologies.incrementAndGet()));
		owned(topology.shortTierQueue());
		owned(topology.longTierQueue());
		return topology;
	}

	/**
	 * The id that makes this class's names unique, e.g. for listener ids.
	 * @return the id
	 */
	public String id() {
		return this.id;
	}

	/**
	 * The plain AMQP client of the running test.
	 * @return the client
	 */
	public BrokerClient broker() {
		return this.broker;
	}

	/**
	 * The name of the class's parking lot, the one its application is given
	 * ({@link RetrySettings#of(TestQueues)}).
	 * @return its name
	 */
	public String parkingLotName() {
		return name("parking");
	}

	/**
	 * The reader of the class's parking lot for the running test.
	 * @return the reader
	 */
	public ParkingLot parkingLot() {
		return parkingLot(parkingLotName());
	}

	/**
	 * The reader of a parking lot for the running test (it keeps what it drained until
	 * the test ends).
	 * @param queue the parking lot's name
	 * @return the reader
	 */
	public ParkingLot parkingLot(String queue) {
		return this.parkingLots.computeIfAbsent(queue, (name) -> new ParkingLot(this.broker, name));
	}

	@Override
	public void beforeEach(ExtensionContext context) {
		this.broker = new BrokerClient();
	}

	@Override
	public void afterEach(ExtensionContext context) {
		this.parkingLots.clear();
		this.broker.close();
	}

	@Override
	public void afterAll(ExtensionContext context) {
		// Deleted when the class's extension context closes, after the Spring test
		// framework has closed the (dirtied) application: its running listener containers
		// and admin would declare the queues again, and no test may leave queues behind
		// on
		// the shared broker.
		AutoCloseable deleteQueues = () -> {
			try (BrokerClient client = new BrokerClient()) {
				this.names.forEach(client::deleteQueue);
			}
		};
		context.getStore(ExtensionContext.Namespace.create(TestQueues.class)).put("delete-queues", deleteQueues);
	}

	/**
	 * A retry topology of one test class's own, from {@link TestQueues#topology()}.
	 *
	 * @param shortTier the shorter delay tier
	 * @param longTier the longer delay tier, 2 s longer
	 * @param parkingLot the parking lot's name
	 */
	public record Topology(Duration shortTier, Duration longTier, String parkingLot) {

		public String shortTierQueue() {
			return RetryTopology.tierQueueName(this.shortTier);
		}

		public String longTierQueue() {
			return RetryTopology.tierQueueName(this.longTier);
		}

		/**
		 * The {@code retry.tiers} value.
		 * @return both tiers, ascending
		 */
		public String tiers() {
			return this.shortTier.toMillis() + "ms, " + this.longTier.toMillis() + "ms";
		}

	}

}
