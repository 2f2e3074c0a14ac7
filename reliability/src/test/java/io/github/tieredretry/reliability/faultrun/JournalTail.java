package io.github.tieredretry.reliability.faultrun;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import io.github.tieredretry.reliability.consumer.OutcomeJournal;

/**
 * Follows the consumer processes' outcome journals as they grow. Only complete lines count: a line cut
 * short by a SIGKILL is the last one of its file and is never completed, so it is ignored, and the
 * message it was about was not acked and comes back.
 */
final class JournalTail {

	private final Path directory;

	private final int messages;

	private final Map<Path, Long> offsets = new HashMap<>();

	private final int[] processedCounts;

	private final BitSet settled;

	private long records;

	private long unreadableLines;

	JournalTail(Path directory, int messages) {
		this.directory = directory;
		this.messages = messages;
		this.processedCounts = new int[messages];
		this.settled = new BitSet(messages);
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
		int space = line.indexOf(' ');
		int index = (space > 0) ? FaultPlans.indexOf(line.substring(space + 1)) : -1;
		if (index < 0 || index >= this.messages) {
			this.unreadableLines++;
			return;
		}
		String kind = line.substring(0, space);
		if (kind.equals(OutcomeJournal.PROCESSED)) {
			this.processedCounts[index]++;
		}
		else if (!kind.equals(OutcomeJournal.PARKED)) {
			this.unreadableLines++;
			return;
		}
		this.records++;
		this.settled.set(index);
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
	synchronized int settledMessages() {
		return this.settled.cardinality();
	}

	synchronized int processedCount(int index) {
		return this.processedCounts[index];
	}

	synchronized long unreadableLines() {
		return this.unreadableLines;
	}

}
