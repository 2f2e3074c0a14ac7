package io.github.tieredretry.reliability.consumer;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Append-only record of what this consumer process did, one line per outcome:
 * {@code S <message-id> <at>} for a message the listener processed,
 * {@code P <message-id>} for one that was parked; one line per failed invocation,
 * {@code F <message-id> <at>}; one line per confirmed forward to a tier,
 * {@code R <message-id> <from> <to>}: the message expires in its tier between those two
 * instants (epoch milliseconds); and one line per delivery of a message replayed from the
 * parking lot, {@code X <message-id> <replay-count> <replayed-at>}. {@code F} and
 * {@code R} tell the harness where a message was last seen when a broker restart lost it;
 * the times of {@code S} place duplicates in the fault windows; {@code X} shows when each
 * replay of a message happened.
 * <p>
 * A line is written with one {@code write(2)} before the listener returns, so it reaches
 * the operating system before the container can ack the message: killing the process
 * (SIGKILL) cannot lose it. It is not fsynced; the fault run kills processes, not
 * machines. Each process writes its own file, so a line cut short by the kill can only be
 * the last line of a dead process's file.
 */
public final class OutcomeJournal implements AutoCloseable {

	/** Prefix of a processed message's line. */
	public static final String PROCESSED = "S";

	/**
	 * Prefix of a parked message's line (progress only: the parking lot itself is the
	 * record).
	 */
	public static final String PARKED = "P";

	/** Prefix of a failed invocation of the listener (not an outcome). */
	public static final String FAILED = "F";

	/** Prefix of a confirmed forward to a delay tier (not an outcome). */
	public static final String RETRY_SCHEDULED = "R";

	/**
	 * Prefix of a delivery of a message replayed from the parking lot (not an outcome).
	 */
	public static final String REPLAYED = "X";

	private final FileChannel channel;

	private final Path file;

	public OutcomeJournal(Path file) {
		this.file = file;
		try {
			Files.createDirectories(file.toAbsolutePath().getParent());
			this.channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
					StandardOpenOption.APPEND);
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot open the outcome journal " + file, ex);
		}
	}

	/**
	 * Record that the listener processed a message.
	 * @param messageId the message
	 */
	public void processed(String messageId) {
		append(PROCESSED + " " + messageId + " " + System.currentTimeMillis() + "\n");
	}

	public void parked(String messageId) {
		append(PARKED + " " + messageId + "\n");
	}

	/**
	 * Record that the listener is about to fail on a message.
	 * @param messageId the message
	 */
	public void failed(String messageId) {
		append(FAILED + " " + messageId + " " + System.currentTimeMillis() + "\n");
	}

	/**
	 * Record a forward to a tier that the broker confirmed.
	 * @param messageId the message
	 * @param expiresFrom the earliest instant the message can expire in its tier (epoch
	 * milliseconds)
	 * @param expiresTo the latest instant it can expire there (epoch milliseconds)
	 */
	public void retryScheduled(String messageId, long expiresFrom, long expiresTo) {
		append(RETRY_SCHEDULED + " " + messageId + " " + expiresFrom + " " + expiresTo + "\n");
	}

	/**
	 * Record the delivery of a message that was replayed from the parking lot.
	 * @param messageId the message
	 * @param replayCount how often it was replayed ({@code retry-replay-count})
	 * @param replayedAt when it was last replayed ({@code retry-replayed-at}, epoch
	 * milliseconds)
	 */
	public void replayed(String messageId, long replayCount, long replayedAt) {
		append(REPLAYED + " " + messageId + " " + replayCount + " " + replayedAt + "\n");
	}

	private synchronized void append(String line) {
		ByteBuffer buffer = ByteBuffer.wrap(line.getBytes(StandardCharsets.UTF_8));
		try {
			while (buffer.hasRemaining()) {
				this.channel.write(buffer);
			}
		}
		catch (IOException ex) {
			// The listener must fail: an unrecorded success would count as lost.
			throw new UncheckedIOException("Cannot append to the outcome journal " + this.file, ex);
		}
	}

	@Override
	public void close() throws IOException {
		this.channel.close();
	}

}
