package io.github.tieredretry.sample;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import com.jayway.jsonpath.JsonPath;
import com.rabbitmq.client.AMQP;
import io.github.tieredretry.delayedsend.DelayedSender;
import io.github.tieredretry.headers.RetryHeaders;
import io.github.tieredretry.listener.ListenerGates;
import io.github.tieredretry.parkinglot.ParkedMessage;
import io.github.tieredretry.parkinglot.ParkedMessageFilter;
import io.github.tieredretry.parkinglot.ParkingLotService;
import io.github.tieredretry.test.TieredRetryTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.StaleElementReferenceException;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.WebDriverWait;

import org.springframework.amqp.core.AmqpAdmin;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.amqp.support.converter.MessageConversionException;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The operations console in headless Chromium, against the sample app on the real broker:
 * an operator sees why the demo's orders were parked, replays one failure group once the
 * payment provider is back, purges another, replays and purges a selection of messages,
 * and a parked message full of markup stays text.
 */
@SpringBootTest(classes = SampleApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@TieredRetryTest(tiers = { "211ms", "503ms" })
// Imported: with classes set explicitly, a nested @TestConfiguration is not picked up.
@Import(OperationsConsoleBrowserIntegrationTests.DeleteTestQueues.class)
@DirtiesContext
class OperationsConsoleBrowserIntegrationTests {

	static final String RUN = UUID.randomUUID().toString().substring(0, 8);

	static final String QUEUE = "console-orders-" + RUN;

	static final String PARKING_LOT = "console-parking-" + RUN;

	static final String REMINDERS = "console-reminders-" + RUN;

	static final String SCHEDULED = "console-scheduled-" + RUN;

	/** Markup that would run if the console put text on the page as HTML. */
	static final String HOSTILE_ID = "<img src=x onerror=\"window.xss='id'\"><script>window.xss='id-script'</script>";

	static final String HOSTILE_ERROR = "<img src=x onerror=\"window.xss='error'\"> card 4242 declined";

	static final String STACK_TRACE = "java.lang.IllegalStateException: <b>card declined</b>\n"
			+ "\tat Payments.charge(Payments.java:42)";

	@DynamicPropertySource
	static void properties(DynamicPropertyRegistry registry) {
		registry.add(SampleTopology.ORDERS_QUEUE_PROPERTY, () -> QUEUE);
		registry.add("retry.parking-lot", () -> PARKING_LOT);
		registry.add("retry.policies.payments.delays", () -> "211ms, 503ms");
		registry.add("retry.console.enabled", () -> "true");
		// Its own scheduled queue, deleted with the others: a reminder still waiting when
		// the test ends must not reach the sample's next run.
		registry.add("retry.delayed-send.queue", () -> SCHEDULED);
	}

	@LocalServerPort
	int port;

	@Autowired
	OrderLedger ledger;

	@Autowired
	PaymentGateway gateway;

	@Autowired
	ParkingLotService parkingLot;

	@Autowired
	ListenerGates gates;

	@Autowired
	DelayedSender delayedSender;

	@TempDir
	Path profile;

	ChromeDriver browser;

	WebDriverWait wait;

	@BeforeEach
	void openBrowser() {
		this.browser = HeadlessChromium.start(this.profile);
		// The page renders its tables anew after every change: an element found a moment
		// ago may be gone.
		this.wait = new WebDriverWait(this.browser, Duration.ofSeconds(20));
		this.wait.ignoring(StaleElementReferenceException.class);
	}

	@Autowired
	RabbitTemplate rabbit;

	@AfterEach
	void closeBrowser() {
		this.browser.quit();
	}

	private long count(String queue) {
		return this.rabbit.execute((channel) -> channel.messageCount(queue));
	}

	@Test
	void anOperatorSeesWhyOrdersFailedReplaysOneGroupAndPurgesAnotherWhileHostileTextStaysText() {
		// The demo parks three orders: an outage that outlasted every retry, a fraud, a
		// malformed payload.
		await().atMost(Duration.ofSeconds(30)).until(() -> this.ledger.paidCount() == 14 && count(PARKING_LOT) == 3);
		parkHostileMessage();
		// A reminder sent for later waits in the tiers meanwhile: the tier table counts
		// it.
		this.rabbit.execute((channel) -> channel.queueDeclare(REMINDERS, false, false, false, null));
		this.delayedSender.convertAndSend("", REMINDERS, "remind order 7", Duration.ofMinutes(2));

		this.browser.get("http://localhost:" + this.port + "/retry-console");
		this.wait.until((browser) -> groupRows().size() == 4);
		this.wait
			.until(ExpectedConditions.textToBePresentInElementLocated(By.id("summary"), PARKING_LOT + ": 4 parked"));
		assertThat(this.browser.findElement(By.id("tiers")).getText()).contains("retry.delay.211ms");
		// Between two hops of 503 ms it is briefly in none: the page shows it again at
		// its
		// next refresh.
		this.wait.until((browser) -> "1"
			.equals(browser.findElement(By.cssSelector("#tiers td[data-scheduled='503ms']")).getText()));
		assertThat(this.browser.findElement(By.id("listeners")).getText()).contains("OrderListener#onOrder")
			.contains("payments");
		HeadlessChromium.screenshot(this.browser, "groups");

		// Hostile data is shown as text and runs nothing.
		WebElement hostile = groupRow("IllegalStateException");
		assertThat(hostile.findElement(By.cssSelector("td.error-text")).getText()).isEqualTo(HOSTILE_ERROR);
		clickInGroup("IllegalStateException", "show-messages");
		this.wait.until((browser) -> messageRows().size() == 1);
		WebElement message = messageRows().get(0);
		assertThat(message.findElement(By.cssSelector("td.message-id")).getText()).isEqualTo(HOSTILE_ID);
		clickInFirstMessage("button.toggle-details");
		this.wait.until(ExpectedConditions.textToBePresentInElementLocated(By.id("messages"), "<svg onload"));
		assertThat(this.browser.findElement(By.cssSelector("#messages pre.body-preview")).getText())
			.isEqualTo("<script>window.xss='body'</script>");
		assertThat(this.browser.findElement(By.cssSelector("#messages pre.stack-trace")).getText())
			.startsWith("java.lang.IllegalStateException: <b>card declined</b>")
			.contains("at Payments.charge(Payments.java:42)");
		assertThat(this.browser.executeScript("return typeof window.xss")).as("no markup ran").isEqualTo("undefined");
		// The trends chart is the one SVG on the page, drawn by the console itself.
		assertThat(this.browser
			.findElements(By.cssSelector("main img, main script, main :not(#trends-chart) > svg, main b"))).isEmpty();

		// The payment provider is back: look at the outage's messages, then replay that
		// group.
		this.gateway.heal();
		WebElement outage = groupRow("PaymentTimeoutException");
		assertThat(outage.findElement(By.cssSelector("td.count")).getText()).isEqualTo("1");
		assertThat(outage.findElement(By.cssSelector("td.error-text")).getText())
			.startsWith("Payment provider timed out charging 250.00");
		clickInGroup("PaymentTimeoutException", "show-messages");
		this.wait.until(
				ExpectedConditions.textToBePresentInElementLocated(By.id("messages-title"), "PaymentTimeoutException"));
		clickInFirstMessage("button.toggle-details");
		this.wait.until(ExpectedConditions.textToBePresentInElementLocated(By.id("messages"), "broke-dave"));
		this.browser.executeScript("document.getElementById('messages-section').scrollIntoView()");
		HeadlessChromium.screenshot(this.browser, "messages");
		this.browser.executeScript("window.scrollTo(0, 0)");

		clickInGroup("PaymentTimeoutException", "replay-group");
		awaitConfirmation("Replay 1 message(s) of this group to " + QUEUE + "?");
		HeadlessChromium.screenshot(this.browser, "confirm-replay");
		this.browser.findElement(By.id("confirm-ok")).click();
		await().atMost(Duration.ofSeconds(20)).until(() -> this.ledger.paidCount() == 15);
		this.wait.until(ExpectedConditions.textToBe(By.id("replay-state"), "finished"));
		this.wait.until((browser) -> groupRows().size() == 3);
		// Waited for, not read once: the page renders the replay anew as it polls it.
		this.wait.until(ExpectedConditions.textToBe(By.id("replay-moved"), "1 moved"));
		this.wait
			.until(ExpectedConditions.textToBePresentInElementLocated(By.id("summary"), PARKING_LOT + ": 3 parked"));
		HeadlessChromium.screenshot(this.browser, "replayed");

		// The fraud can never succeed: purge that group.
		clickInGroup("FraudSuspectedException", "purge-group");
		confirm("Purge 1 message(s) of this group for good?");
		this.wait.until((browser) -> groupRows().size() == 2);
		assertThat(count(PARKING_LOT)).isEqualTo(2);
		assertThat(this.browser.findElement(By.id("groups")).getText()).contains("MessageConversionException")
			.doesNotContain("FraudSuspectedException");

		// A selection: replay the malformed payload (it is parked again at once, replayed
		// once) ...
		ParkedMessage malformed = parked(MessageConversionException.class.getName());
		showOnlyMessage("MessageConversionException", malformed.messageId());
		clickInFirstMessage("input.select");
		this.browser.findElement(By.id("replay-selected")).click();
		confirm("Replay 1 selected message(s) to their queue?");
		this.wait.until(ExpectedConditions.textToBePresentInElementLocated(By.id("replay-filter"),
				"messageId " + malformed.messageId()));
		this.wait.until(ExpectedConditions.textToBe(By.id("replay-moved"), "1 moved"));
		await().atMost(Duration.ofSeconds(10))
			.until(() -> parked(MessageConversionException.class.getName()).replays() == 1);

		// ... and purge the hostile message.
		showOnlyMessage("IllegalStateException", HOSTILE_ID);
		clickInFirstMessage("input.select");
		this.browser.findElement(By.id("purge-selected")).click();
		confirm("Purge 1 selected message(s) for good?");
		this.wait.until((browser) -> groupRows().size() == 1);
		assertThat(count(PARKING_LOT)).isEqualTo(1);
		assertThat(this.browser.executeScript("return typeof window.xss")).isEqualTo("undefined");

		// The last 24 hours: the demo's three orders and the malformed one, parked again
		// after its replay, were parked; two were replayed; the endpoint says the same,
		// and so does the chart, hour by hour.
		String trends = get("/actuator/retry/trends");
		List<Integer> retried = JsonPath.read(trends, "$.series[?(@.queue == '" + QUEUE + "')].retried[*]");
		List<Integer> parked = JsonPath.read(trends, "$.series[?(@.queue == '" + QUEUE + "')].parked[*]");
		List<Integer> replayed = JsonPath.read(trends, "$.series[?(@.queue == '" + QUEUE + "')].replayed[*]");
		assertThat(JsonPath.<List<String>>read(trends, "$.hours")).hasSize(24);
		assertThat(JsonPath.<List<String>>read(trends, "$.series[*].listener"))
			.containsExactly("OrderListener#onOrder");
		assertThat(sum(parked)).isEqualTo(4);
		assertThat(sum(replayed)).isEqualTo(2);
		assertThat(sum(retried)).isPositive();
		this.browser.navigate().refresh();
		this.wait.until((browser) -> !browser.findElements(By.cssSelector("#trends tbody tr")).isEmpty());
		// The page draws the trends anew every 5 s: each read is retried on a stale
		// element.
		List<String> expected = List.of(String.valueOf(sum(retried)), "4", "2");
		this.wait.until((browser) -> trendCells().equals(expected));
		this.wait.until((browser) -> chartCounts("parked") == 4 && chartCounts("replayed") == 2
				&& chartCounts("retried") == sum(retried));
		this.browser.executeScript("document.getElementById('trends-section').scrollIntoView()");
		HeadlessChromium.screenshot(this.browser, "trends");
	}

	private String get(String path) {
		try {
			HttpResponse<String> response = HttpClient.newHttpClient()
				.send(HttpRequest.newBuilder(URI.create("http://localhost:" + this.port + path)).build(),
						HttpResponse.BodyHandlers.ofString());
			assertThat(response.statusCode()).as(path).isEqualTo(200);
			return response.body();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	// The trends table's retried, parked and replayed counts of the test's queue.
	private List<String> trendCells() {
		WebElement row = this.browser.findElement(By.cssSelector("#trends tbody tr[data-queue='" + QUEUE + "']"));
		return List.of(row.findElement(By.cssSelector("td.retried")).getText(),
				row.findElement(By.cssSelector("td.parked")).getText(),
				row.findElement(By.cssSelector("td.replayed")).getText());
	}

	// The counts the chart's bars of one kind stand for, over every hour.
	private int chartCounts(String kind) {
		return this.browser.findElements(By.cssSelector("#trends-chart rect." + kind))
			.stream()
			.mapToInt((bar) -> Integer.parseInt(bar.getAttribute("data-count")))
			.sum();
	}

	private static int sum(List<Integer> counts) {
		return counts.stream().mapToInt(Integer::intValue).sum();
	}

	private ParkedMessage parked(String exception) {
		return this.parkingLot.peek(ParkedMessageFilter.parse(null, null, exception, null, null, null, null), 10, 100)
			.messages()
			.get(0);
	}

	@Test
	void anOperatorPausesTheListenerBehindItsBreakerAndResumesIt() {
		this.browser.get("http://localhost:" + this.port + "/retry-console");
		this.wait.until(ExpectedConditions.textToBePresentInElementLocated(By.id("listeners"), "closed"));
		assertThat(breakerStates()).containsExactly("closed");
		try {
			this.wait.until(ExpectedConditions.elementToBeClickable(By.cssSelector("button[data-breaker='pause']")))
				.click();
			confirm("Pause OrderListener#onOrder?");

			this.wait.until(ExpectedConditions.textToBePresentInElementLocated(By.id("listeners"),
					"forced open: paused by an operator"));
			assertThat(breakerStates()).containsExactly("forced-open");
			HeadlessChromium.screenshot(this.browser, "breaker-paused");

			this.wait.until(ExpectedConditions.elementToBeClickable(By.cssSelector("button[data-breaker='resume']")))
				.click();
			this.wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("confirm")));
			this.browser.findElement(By.id("confirm-ok")).click();
			this.wait.until(ExpectedConditions.elementToBeClickable(By.cssSelector("button[data-breaker='pause']")));
			assertThat(breakerStates()).containsExactly("closed");
		}
		finally {
			this.gates.breakers().forEach((breaker) -> this.gates.close(breaker.listener()));
		}
	}

	private List<String> breakerStates() {
		return this.gates.breakers().stream().map((breaker) -> breaker.status().value()).toList();
	}

	/**
	 * Waits for the console's confirmation dialog and checks that it asks the question.
	 */
	private void awaitConfirmation(String question) {
		this.wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("confirm")));
		assertThat(this.browser.findElement(By.id("confirm-text")).getText()).isEqualTo(question);
	}

	/**
	 * Answers the console's confirmation dialog, once it asks the question, with OK.
	 */
	private void confirm(String question) {
		awaitConfirmation(question);
		this.browser.findElement(By.id("confirm-ok")).click();
	}

	/**
	 * Shows the messages of a group, which are only the given one.
	 */
	private void showOnlyMessage(String exception, String messageId) {
		clickInGroup(exception, "show-messages");
		this.wait.until((browser) -> messageRows().size() == 1
				&& messageRows().get(0).getAttribute("data-message-id").equals(messageId));
	}

	private void clickInGroup(String exception, String button) {
		this.wait.until((browser) -> {
			groupRow(exception).findElement(By.cssSelector("button." + button)).click();
			return true;
		});
	}

	private void clickInFirstMessage(String control) {
		this.wait.until((browser) -> {
			messageRows().get(0).findElement(By.cssSelector(control)).click();
			return true;
		});
	}

	private List<WebElement> groupRows() {
		return this.browser.findElements(By.cssSelector("#groups tbody tr"));
	}

	private List<WebElement> messageRows() {
		return this.browser.findElements(By.cssSelector("#messages tbody tr[data-message-id]"));
	}

	private WebElement groupRow(String exception) {
		return groupRows().stream()
			.filter((row) -> row.findElement(By.cssSelector("td.exception")).getText().endsWith(exception))
			.findFirst()
			.orElseThrow(() -> new AssertionError("No failure group for " + exception + " in "
					+ this.browser.findElement(By.id("groups")).getText()));
	}

	private void parkHostileMessage() {
		Map<String, Object> headers = new LinkedHashMap<>();
		headers.put(RetryHeaders.QUEUE, QUEUE);
		headers.put(RetryHeaders.COUNT, 3L);
		headers.put(RetryHeaders.PARKED_REASON, "exhausted");
		headers.put(RetryHeaders.PARKED_AT, System.currentTimeMillis());
		headers.put(RetryHeaders.EXCEPTION, IllegalStateException.class.getName());
		headers.put(RetryHeaders.ERROR, HOSTILE_ERROR);
		headers.put(RetryHeaders.STACK_TRACE, STACK_TRACE);
		headers.put("note", "<svg onload=\"window.xss='header'\">");
		AMQP.BasicProperties properties = new AMQP.BasicProperties.Builder().messageId(HOSTILE_ID)
			.contentType("text/html")
			.deliveryMode(2)
			.headers(headers)
			.correlationId(UUID.randomUUID().toString())
			.build();
		this.rabbit.execute((channel) -> {
			channel.basicPublish("", PARKING_LOT, properties,
					"<script>window.xss='body'</script>".getBytes(StandardCharsets.UTF_8));
			return null;
		});
	}

	@TestConfiguration(proxyBeanMethods = false)
	static class DeleteTestQueues {

		@Bean
		DisposableBean deleteConsoleTestQueues(AmqpAdmin admin) {
			// At context close, after the listener containers stopped: the class shares
			// the broker with other tests.
			return () -> List.of(QUEUE, PARKING_LOT, REMINDERS, SCHEDULED, "retry.delay.211ms", "retry.delay.503ms")
				.forEach(admin::deleteQueue);
		}

	}

}
