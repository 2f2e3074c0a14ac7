package io.github.tieredretry.testbrokers;

/**
 * The outcome of a broker command line ({@code rabbitmqctl ...}).
 *
 * @param command the command, for messages
 * @param exitCode its exit code
 * @param output its standard output and error
 */
public record CommandResult(String command, int exitCode, String output) {

	public CommandResult requireSuccess() {
		if (this.exitCode != 0) {
			throw new IllegalStateException(
					"'" + this.command + "' failed with exit code " + this.exitCode + ":\n" + this.output);
		}
		return this;
	}

}
