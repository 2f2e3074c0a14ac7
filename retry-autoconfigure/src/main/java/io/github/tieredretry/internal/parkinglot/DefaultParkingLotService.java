package io.github.tieredretry.internal.parkinglot;

import java.time.Clock;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

import io.github.tieredretry.event.MessageReplayedEvent;
import io.github.tieredretry.headers.RetryHeaders;
import io.github.tieredretry.internal.event.RetryEventPublisher;
import io.github.tieredretry.internal.forwarding.MessageForwarder;
import io.github.tieredretry.internal.headers.RetryHeaderValues;
import io.github.tieredretry.observation.RetryObservations;
import io.github.tieredretry.parkinglot.FailureGroup;
import io.github.tieredretry.parkinglot.FailureGroups;
import io.github.tieredretry.parkinglot.ParkedMessage;
import io.github.tieredretry.parkinglot.ParkedMessageFilter;
import io.github.tieredretry.parkinglot.ParkingLotRequest;
import io.github.tieredretry.parkinglot.ParkingLotRequestException;
import io.github.tieredretry.parkinglot.ParkingLotService;
import io.github.tieredretry.parkinglot.PeekResult;
import io.github.tieredretry.parkinglot.PurgeResult;
import io.github.tieredretry.parkinglot.ReplayPreview;
import io.github.tieredretry.parkinglot.ReplayResult;
import io.github.tieredretry.parkinglot.ReplaySettings;
import io.github.tieredretry.parkinglot.ReplayStatus;
import io.github.tieredretry.parkinglot.RetentionLimits;
import io.github.tieredretry.parkinglot.RetentionResult;
import org.jspecify.annotations.Nullable;

import org.springframework.amqp.rabbit.connection.ConnectionFactory;

/**
 * Looks at, groups, replays and purges parked messages, without ever losing one.
 * <p>
 * Every operation reads the parking lot with {@code basic.get} and manual
 * acknowledgement, looking at no more messages than the parking lot held when it started;
 * messages it does not take out are held unacknowledged and requeued when it is done (see
 * {@link ParkingLotScanner}). A replayed message is acked only after its publish to the
 * origin queue has been confirmed: a crash in between can duplicate it, never lose it.
 * Replays move at most {@link ReplaySettings#rate()} messages per second, in passes of at
 * most {@link ReplaySettings#batchSize()} messages, so that a long replay never holds
 * messages for long; a replay in the background ({@link #startReplay}) can be watched and
 * stopped.
 * <p>
 * Every argument is checked; a request that cannot be served fails with a
 * {@link ParkingLotRequestException} that says why. This class is the façade: peek and
 * groups are here, replays live in {@link ParkingLotReplays} (each one a
 * {@link ReplayRun}) and purges in {@link ParkingLotPurges}.
 */
public final class DefaultParkingLotService implements ParkingLotService {

	private final ParkingLotScanner scanner;

	private final ParkingLotReplays replays;

	private final ParkingLotPurges purges;

	private final ParkingLotExpiry expiry;

	/**
	 * Create a service for a parking lot with the default replay settings.
	 * @param connectionFactory the connection factory to read the parking lot with
	 * @param parkingLot the parking lot's queue
	 * @param forwarder publishes replayed messages to their origin queue, confirmed
	 * @param clock the clock
	 */
	public DefaultParkingLotService(ConnectionFactory connectionFactory, String parkingLot, MessageForwarder forwarder,
			Clock clock) {
		this(connectionFactory, parkingLot, forwarder, ReplaySettings.DEFAULTS, clock);
	}

	/**
	 * Create a service for a parking lot.
	 * @param connectionFactory the connection factory to read the parking lot with
	 * @param parkingLot the parking lot's queue
	 * @param forwarder publishes replayed messages to their origin queue, confirmed
	 * @param replaySettings how fast replays go
	 * @param clock the clock
	 */
	public DefaultParkingLotService(ConnectionFactory connectionFactory, String parkingLot, MessageForwarder forwarder,
			ReplaySettings replaySettings, Clock clock) {
		this(connectionFactory, parkingLot, forwarder, replaySettings, RetryObservations.DISABLED, clock);
	}

	/**
	 * Create a service for a parking lot whose replays are observed.
	 * @param connectionFactory the connection factory to read the parking lot with
	 * @param parkingLot the parking lot's queue
	 * @param forwarder publishes replayed messages to their origin queue, confirmed
	 * @param replaySettings how fast replays go
	 * @param observations observes the publish of each replayed message
	 * @param clock the clock
	 */
	public DefaultParkingLotService(ConnectionFactory connectionFactory, String parkingLot, MessageForwarder forwarder,
			ReplaySettings replaySettings, RetryObservations observations, Clock clock) {
		this(connectionFactory, parkingLot, forwarder::toQueue, replaySettings, observations, clock);
	}

	/**
	 * Create a service for a parking lot whose replays are observed and published, one
	 * {@link MessageReplayedEvent} per replayed message.
	 * @param connectionFactory the connection factory to read the parking lot with
	 * @param parkingLot the parking lot's queue
	 * @param forwarder publishes replayed messages to their origin queue, confirmed
	 * @param replaySettings how fast replays go
	 * @param observations observes the publish of each replayed message
	 * @param events where each replayed message is published, once the broker confirmed
	 * it
	 * @param clock the clock
	 */
	public DefaultParkingLotService(ConnectionFactory connectionFactory, String parkingLot, MessageForwarder forwarder,
			ReplaySettings replaySettings, RetryObservations observations, RetryEventPublisher events, Clock clock) {
		this(connectionFactory, parkingLot, publishing(forwarder::toQueue, events), replaySettings, observations,
				clock);
	}

	/**
	 * Create a service whose replays publish with a replayer of their own (tests use it).
	 * @param connectionFactory the connection factory to read the parking lot with
	 * @param parkingLot the parking lot's queue
	 * @param replayer publishes each replayed message, confirmed
	 * @param replaySettings how fast replays go
	 * @param observations observes the publish of each replayed message
	 * @param clock the clock
	 */
	public DefaultParkingLotService(ConnectionFactory connectionFactory, String parkingLot, Replayer replayer,
			ReplaySettings replaySettings, RetryObservations observations, Clock clock) {
		this.scanner = new ParkingLotScanner(connectionFactory, parkingLot);
		this.replays = new ParkingLotReplays(this.scanner, replayer, replaySettings, observations, clock);
		this.purges = new ParkingLotPurges(this.scanner);
		this.expiry = new ParkingLotExpiry(this.scanner, clock);
	}

	private static Replayer publishing(Replayer replayer, RetryEventPublisher events) {
		return (queue, properties, body) -> {
			replayer.publish(queue, properties, body);
			Object replays = ParkedMessages.headers(properties).get(RetryHeaders.REPLAY_COUNT);
			events
				.publish(new MessageReplayedEvent(queue, RetryHeaderValues.count(replays), properties.getMessageId()));
		};
	}

	@Override
	public String parkingLot() {
		return this.scanner.parkingLot();
	}

	@Override
	public ReplaySettings replaySettings() {
		return this.replays.replaySettings();
	}

	@Override
	public PurgeResult purgeAsRequested(ParkingLotRequest request) {
		return this.purges.purgeAsRequested(request);
	}

	@Override
	public PeekResult peek(ParkedMessageFilter filter, int limit, int scanLimit) {
		ParkedMessageLooker.checkRange("limit", limit, MAX_PEEK_LIMIT);
		ParkedMessageLooker.checkRange("scanLimit", scanLimit, MAX_SCAN_LIMIT);
		List<ParkedMessage> messages = new ArrayList<>();
		ParkingLotScanner.Pass pass = this.scanner.pass(scanLimit, new ParkedMessageLooker(filter, messages::add) {

			@Override
			public boolean wantsMore() {
				return messages.size() < limit;
			}

		});
		return new PeekResult(parkingLot(), pass.depth(), pass.count(),
				messages.size() < limit && ParkedMessageLooker.isPartial(pass, scanLimit), messages);
	}

	@Override
	public FailureGroups groups(ParkedMessageFilter filter, int scanLimit) {
		ParkedMessageLooker.checkRange("scanLimit", scanLimit, MAX_SCAN_LIMIT);
		Map<String, FailureGroup> groups = new LinkedHashMap<>();
		ParkingLotScanner.Pass pass = this.scanner.pass(scanLimit,
				new ParkedMessageLooker(filter, (message) -> groups.merge(message.group(), FailureGrouping.of(message),
						(group, one) -> FailureGrouping.with(group, message))));
		List<FailureGroup> largestFirst = new ArrayList<>(groups.values());
		largestFirst.sort(Comparator.comparingLong(FailureGroup::count).reversed());
		return new FailureGroups(parkingLot(), pass.depth(), pass.count(),
				ParkedMessageLooker.isPartial(pass, scanLimit), largestFirst);
	}

	@Override
	public ReplayResult replayMatching(ParkedMessageFilter filter, @Nullable Integer limit) {
		return this.replays.replayMatching(filter, limit);
	}

	@Override
	public ReplayStatus startReplay(ParkedMessageFilter filter, @Nullable Integer limit,
			Consumer<ReplayStatus> whenEnded) {
		return this.replays.startReplay(filter, limit, whenEnded);
	}

	@Override
	public @Nullable ReplayStatus replayStatus() {
		return this.replays.replayStatus();
	}

	@Override
	public @Nullable ReplayStatus stopReplay() {
		return this.replays.stopReplay();
	}

	@Override
	public ReplayPreview previewReplay(ParkedMessageFilter filter, @Nullable Integer limit, int scanLimit) {
		return this.replays.previewReplay(filter, limit, scanLimit);
	}

	@Override
	public PurgeResult purgeMatching(ParkedMessageFilter filter) {
		return this.purges.purgeMatching(filter);
	}

	@Override
	public PurgeResult previewPurge(ParkedMessageFilter filter, int scanLimit) {
		return this.purges.previewPurge(filter, scanLimit);
	}

	@Override
	public RetentionResult removeExpired(RetentionLimits limits) {
		return this.expiry.removeExpired(limits);
	}

	@Override
	public void close() {
		this.replays.close();
	}

}
