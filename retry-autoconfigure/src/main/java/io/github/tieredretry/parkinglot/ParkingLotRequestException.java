package io.github.tieredretry.parkinglot;

/**
 * A parking-lot operation was asked for something it cannot do: a limit out of range, an
 * unknown parked reason, a time that is not a time. The message says what was wrong and
 * what is allowed; over HTTP it is a {@code 400 Bad Request} with that message in the
 * body.
 */
public class ParkingLotRequestException extends IllegalArgumentException {

	public ParkingLotRequestException(String message) {
		super(message);
	}

}
