package io.github.tieredretry.testsupport;

import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Queue names of one test class, unique on the shared broker, with a plain AMQP client per test; every
 * queue named here is deleted after the class. Register it as a static field, before the constants
 * that use it:
 * <pre class="code">
 * &#64;RegisterExtension
 * static final TestQueues queues = TestQueues.prefixed("routing");
 * static final String QUEUE = queues.name("work");
 * </pre>
 */
public final class TestQueues implements BeforeEachCallback, AfterEachCallback, AfterAllCallback {

	private final String prefix;

	private final String id = UUID.randomUUID().toString().substring(0, 8);

	private final Set<String> names = ConcurrentHashMap.newKeySet();

	private BrokerClient broker;

	private final Map<String, ParkingLot> parkingLots = new ConcurrentHashMap<>();

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
		return name;
	}

	/**
	 * A queue whose name is fixed (a tier queue, say) but which this class alone uses: deleted after the
	 * class like the others, so that no test leaves it behind on the shared broker.
	 * @param name the queue's name
	 * @return the name
	 */
	public String owned(String name) {
		this.names.add(name);
		return name;
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
	 * The reader of a parking lot for the running test (it keeps what it drained until the test ends).
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
		// Deleted when the class's extension context closes, after the Spring test framework has closed the
		// (dirtied) application: its running listener containers and admin would declare the queues again,
		// and a parking lot left behind collects copies of other tests' unroutable retries.
		AutoCloseable deleteQueues = () -> {
			try (BrokerClient client = new BrokerClient()) {
				this.names.forEach(client::deleteQueue);
			}
		};
		context.getStore(ExtensionContext.Namespace.create(TestQueues.class)).put("delete-queues", deleteQueues);
	}

}
