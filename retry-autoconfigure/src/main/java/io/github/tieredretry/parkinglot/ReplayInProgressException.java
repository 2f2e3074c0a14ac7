package io.github.tieredretry.parkinglot;

/**
 * A replay was asked for while another one runs: replays of one instance run one at a
 * time. Over HTTP it is a {@code 409 Conflict}.
 */
public class ReplayInProgressException extends IllegalStateException {

	public ReplayInProgressException(String message) {
		super(message);
	}

}
