package io.github.tieredretry.listener;

/**
 * A {@code @RetryableListener} cannot be applied as declared: an unknown policy, a bad
 * delay, or a listener setup that tiered retries cannot support safely. Fails application
 * startup.
 */
public class RetryableListenerConfigurationException extends IllegalStateException {

	private final String listener;

	private final String problem;

	private final String fix;

	/**
	 * Create an exception.
	 * @param listener the listener, e.g. {@code OrderListener#onOrder}
	 * @param problem what is wrong, including the bad value
	 * @param fix how to fix it
	 */
	public RetryableListenerConfigurationException(String listener, String problem, String fix) {
		super("@RetryableListener on " + listener + ": " + problem + ". " + fix);
		this.listener = listener;
		this.problem = problem;
		this.fix = fix;
	}

	public String getListener() {
		return this.listener;
	}

	public String getProblem() {
		return this.problem;
	}

	public String getFix() {
		return this.fix;
	}

}
