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
 * Append-only record of what this consumer process did, one line per outcome: {@code S <message-id>}
 * for a message the listener processed, {@code P <message-id>} for one that was parked.
 * <p>
 * A line is written with one {@code write(2)} before the listener returns, so it reaches the operating
 * system before the container can ack the message: killing the process (SIGKILL) cannot lose it. It is
 * not fsynced; the fault run kills processes, not machines. Each process writes its own file, so a line
 * cut short by the kill can only be the last line of a dead process's file.
 */
public final class OutcomeJournal implements AutoCloseable {

	/** Prefix of a processed message's line. */
	public static final String PROCESSED = "S";

	/** Prefix of a parked message's line (progress only: the parking lot itself is the record). */
	public static final String PARKED = "P";

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

	public void processed(String messageId) {
		append(PROCESSED + " " + messageId + "\n");
	}

	public void parked(String messageId) {
		append(PARKED + " " + messageId + "\n");
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
