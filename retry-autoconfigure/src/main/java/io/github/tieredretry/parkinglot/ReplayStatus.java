package io.github.tieredretry.parkinglot;

import java.time.Instant;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.annotation.JsonInclude;
import org.jspecify.annotations.Nullable;

/**
 * A replay running in the background, or the last one.
 *
 * @param id the replay's id
 * @param state {@code running}, {@code finished} (it looked at every message it was asked
 * to), {@code stopped} (by an operator, or because the broker refused or blocked a
 * publish: see {@code detail}), or {@code failed} (an unexpected error, see
 * {@code detail})
 * @param filter the messages it replays
 * @param limit the most messages it replays, or {@code null} for all
 * @param rate the most messages it moves per second
 * @param startedAt when it started
 * @param endedAt when it ended, or {@code null} while it runs
 * @param moved messages moved so far
 * @param stayed matching messages that stayed parked so far
 * @param stayedByReason how many stayed for each reason
 * @param stayedMessages the first messages that stayed
 * @param scanned parked messages looked at so far
 * @param detail why it stopped or failed
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record ReplayStatus(String id, String state, ParkedMessageFilter filter, @Nullable Integer limit, double rate,
		Instant startedAt, @Nullable Instant endedAt, int moved, int stayed, Map<String, Integer> stayedByReason,
		List<ReplayResult.StayedMessage> stayedMessages, int scanned, @Nullable String detail) {

	/** The state of a replay that is still moving messages. */
	public static final String RUNNING = "running";

	/** The state of a replay that looked at every message it was asked to. */
	public static final String FINISHED = "finished";

	/** The state of a replay that an operator, or the broker, stopped early. */
	public static final String STOPPED = "stopped";

	/** The state of a replay that ended with an unexpected error. */
	public static final String FAILED = "failed";

	public ReplayStatus {
		stayedByReason = Map.copyOf(stayedByReason);
		stayedMessages = List.copyOf(stayedMessages);
	}

	/**
	 * Whether the replay is still moving messages.
	 * @return whether it runs
	 */
	public boolean running() {
		return RUNNING.equals(this.state);
	}

}
