package io.github.tieredretry.reliability.faultrun;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

import io.github.tieredretry.reliability.consumer.OutcomeJournal;
import org.jspecify.annotations.Nullable;

/**
 * Follows the consumer processes' outcome journals as they grow (outcomes and their
 * times, where each message was last seen: its last failure and its last forward to a
 * tier, and the replays its deliveries carried). The journals of every instance and
 * incarnation ({@code journal-*}) are merged. Only complete lines count: a line cut short
 * by a SIGKILL is the last one of its file and is never completed, so it is ignored, and
 * the message it was about was not acked and comes back.
 */
final class JournalTail {

	private final Path directory;

	private final int messages;

	private final Map<Path, Long> offsets = new HashMap<>();

	private final int[] processedCounts;

	private final BitSet settled;

	private int settledFromParkingLot;

	private final long[] lastTierExpiryFrom;

	private final long[] lastTierExpiryTo;

	private final long[] lastFailure;

	private final long[] firstProcessedAt;

	/**
	 * Times of the processing records of a message after its first one (rarely more than
	 * one).
	 */
	private final Map<Integer, List<Long>> moreProcessedAt = new HashMap<>();

	/**
	 * For replayed messages: replay count to when that replay happened, as their
	 * deliveries said.
	 */
	private final Map<Integer, Map<Long, Long>> replays = new HashMap<>();

	private long records;

	private long replayedDeliveries;

	private long unreadableLines;

	JournalTail(Path directory, int messages) {
		this.directory = directory;
		this.messages = messages;
		this.processedCounts = new int[messages];
		this.settled = new BitSet(messages);
		this.lastTierExpiryFrom = new long[messages];
		this.lastTierExpiryTo = new long[messages];
		this.lastFailure = new long[messages];
		this.firstProcessedAt = new long[messages];
	}

	/**
	 * Read what the journals gained since the last call.
	 * @return this tail
	 */
	synchronized JournalTail refresh() {
		List<Path> journals;
		try (Stream<Path> files = Files.list(this.directory)) {
			journals = files.filter((file) -> file.getFileName().toString().startsWith("journal-")).sorted().toList();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		for (Path journal : journals) {
			readNewLines(journal);
		}
		return this;
	}

	private void readNewLines(Path journal) {
		long offset = this.offsets.getOrDefault(journal, 0L);
		try (FileChannel channel = FileChannel.open(journal, StandardOpenOption.READ)) {
			long size = channel.size();
			if (size <= offset) {
				return;
			}
			ByteBuffer buffer = ByteBuffer.allocate((int) Math.min(size - offset, 8 * 1024 * 1024));
			channel.read(buffer, offset);
			byte[] bytes = buffer.array();
			int length = buffer.position();
			int lineStart = 0;
			for (int i = 0; i < length; i++) {
				if (bytes[i] == '\n') {
					accept(new String(bytes, lineStart, i - lineStart, StandardCharsets.UTF_8));
					lineStart = i + 1;
				}
			}
			this.offsets.put(journal, offset + lineStart);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	private void accept(String line) {
		String[] fields = line.split(" ");
		int index = (fields.length >= 2) ? FaultPlans.indexOf(fields[1]) : -1;
		if (index < 0 || index >= this.messages) {
			this.unreadableLines++;
			return;
		}
		String kind = fields[0];
		if (kind.equals(OutcomeJournal.RETRY_SCHEDULED) && fields.length == 4) {
			acceptRetryScheduled(index, fields[2], fields[3]);
			return;
		}
		if (kind.equals(OutcomeJournal.FAILED) && fields.length == 3) {
			acceptFailed(index, fields[2]);
			return;
		}
		if (kind.equals(OutcomeJournal.REPLAYED) && fields.length == 4) {
			acceptReplayed(index, fields[2], fields[3]);
			return;
		}
		if (kind.equals(OutcomeJournal.PROCESSED) && fields.length == 3) {
			if (!acceptProcessed(index, fields[2])) {
				return;
			}
		}
		else if (!kind.equals(OutcomeJournal.PARKED) || fields.length != 2) {
			this.unreadableLines++;
			return;
		}
		this.records++;
		this.settled.set(index);
	}

	private void acceptRetryScheduled(int index, String from, String to) {
		try {
			long expiresFrom = Long.parseLong(from);
			long expiresTo = Long.parseLong(to);
			// The latest forward is where the message was last seen.
			if (expiresFrom >= this.lastTierExpiryFrom[index]) {
				this.lastTierExpiryFrom[index] = expiresFrom;
				this.lastTierExpiryTo[index] = expiresTo;
			}
		}
		catch (NumberFormatException ex) {
			this.unreadableLines++;
		}
	}

	private boolean acceptProcessed(int index, String at) {
		try {
			long processedAt = Long.parseLong(at);
			if (this.processedCounts[index] == 0) {
				this.firstProcessedAt[index] = processedAt;
			}
			else {
				this.moreProcessedAt.computeIfAbsent(index, (key) -> new ArrayList<>()).add(processedAt);
			}
			this.processedCounts[index]++;
			return true;
		}
		catch (NumberFormatException ex) {
			this.unreadableLines++;
			return false;
		}
	}

	private void acceptReplayed(int index, String count, String at) {
		this.replayedDeliveries++;
		try {
			this.replays.computeIfAbsent(index, (key) -> new TreeMap<>())
				.merge(Long.parseLong(count), Long.parseLong(at), Math::min);
		}
		catch (NumberFormatException ex) {
			this.unreadableLines++;
		}
	}

	private void acceptFailed(int index, String at) {
		try {
			this.lastFailure[index] = Math.max(this.lastFailure[index], Long.parseLong(at));
		}
		catch (NumberFormatException ex) {
			this.unreadableLines++;
		}
	}

	/**
	 * When the listener last failed on the message.
	 * @param index the message's index
	 * @return epoch milliseconds, or 0 if it never failed
	 */
	synchronized long lastFailure(int index) {
		return this.lastFailure[index];
	}

	/**
	 * When the message expired in the tier it was last forwarded to, as journaled after
	 * the confirm.
	 * @param index the message's index
	 * @return {@code [from, to]} in epoch milliseconds, or {@code null} if it was never
	 * forwarded to a tier
	 */
	synchronized long @Nullable [] lastTierExpiry(int index) {
		return (this.lastTierExpiryFrom[index] > 0)
				? new long[] { this.lastTierExpiryFrom[index], this.lastTierExpiryTo[index] } : null;
	}

	/**
	 * Outcome lines read so far, duplicates included.
	 * @return the count
	 */
	synchronized long records() {
		return this.records;
	}

	/**
	 * Messages with at least one outcome (processed or parked) so far.
	 * @return the count
	 */
	/**
	 * Count messages found in the parking lot as settled. A parked message's journal line
	 * is written by an event listener after the park was acked: a consumer SIGKILLed in
	 * between leaves the message parked without its line, and only the parking lot says
	 * it has its outcome.
	 * @param copies the parking lot's copies
	 * @return how many messages this settled that no journal line had
	 */
	synchronized int settleParked(List<ParkedCopy> copies) {
		int found = 0;
		for (ParkedCopy copy : copies) {
			if (!copy.isForeign() && !this.settled.get(copy.index())) {
				this.settled.set(copy.index());
				found++;
			}
		}
		this.settledFromParkingLot += found;
		return found;
	}

	/**
	 * Messages settled only by {@link #settleParked}: parked without a journal line.
	 * @return how many
	 */
	synchronized int settledFromParkingLot() {
		return this.settledFromParkingLot;
	}

	synchronized int settledMessages() {
		return this.settled.cardinality();
	}

	synchronized boolean isSettled(int index) {
		return this.settled.get(index);
	}

	synchronized int processedCount(int index) {
		return this.processedCounts[index];
	}

	/**
	 * When each processing record of a message happened, earliest first: every one after
	 * the first is a duplicate, whichever journal it was read from.
	 * @param index the message's index
	 * @return epoch milliseconds, empty when it was never processed
	 */
	synchronized List<Long> processingTimes(int index) {
		if (this.processedCounts[index] == 0) {
			return List.of();
		}
		List<Long> all = new ArrayList<>(this.moreProcessedAt.getOrDefault(index, List.of()));
		all.add(this.firstProcessedAt[index]);
		Collections.sort(all);
		return all;
	}

	/**
	 * The replays a message's deliveries carried ({@code retry-replay-count} and
	 * {@code retry-replayed-at}).
	 * @param index the message's index
	 * @return replay count to when that replay happened (epoch milliseconds), empty if it
	 * was never replayed
	 */
	synchronized Map<Long, Long> replays(int index) {
		return Map.copyOf(this.replays.getOrDefault(index, Map.of()));
	}

	/**
	 * Deliveries of replayed messages journaled so far (lines {@code X}).
	 * @return the count
	 */
	synchronized long replayedDeliveries() {
		return this.replayedDeliveries;
	}

	synchronized long unreadableLines() {
		return this.unreadableLines;
	}

}
