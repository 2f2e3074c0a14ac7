package io.github.tieredretry.parkinglot;

import java.util.Map;

import org.jspecify.annotations.Nullable;

/**
 * A request to the parking lot as an HTTP or JMX client sends it: every value as text (or
 * as JSON numbers and booleans), checked once here. Names: {@code queue}, {@code group},
 * {@code exception}, {@code reason}, {@code parkedAfter}, {@code parkedBefore},
 * {@code messageId} (the {@link ParkedMessageFilter filter}), {@code limit},
 * {@code scanLimit}, {@code dryRun} and {@code all}.
 *
 * @param filter which messages
 * @param limit the most messages to return or replay, or {@code null} for the operation's
 * default
 * @param scanLimit the most messages to look at, or {@code null} for
 * {@value ParkingLotService#DEFAULT_SCAN_LIMIT}
 * @param dryRun whether to say what a replay or purge would do, and do nothing
 * @param all whether a purge without any filter may remove every parked message
 */
public record ParkingLotRequest(ParkedMessageFilter filter, @Nullable Integer limit, @Nullable Integer scanLimit,
		boolean dryRun, boolean all) {

	/**
	 * Read a request from its parameters; unknown names are ignored.
	 * @param parameters the parameters, values as text, numbers or booleans ({@code null}
	 * for absent)
	 * @return the request
	 * @throws ParkingLotRequestException when a value is invalid
	 */
	public static ParkingLotRequest of(Map<String, ?> parameters) {
		ParkedMessageFilter filter = ParkedMessageFilter.parse(text(parameters, "queue"), text(parameters, "group"),
				text(parameters, "exception"), text(parameters, "reason"), text(parameters, "parkedAfter"),
				text(parameters, "parkedBefore"), text(parameters, "messageId"));
		return new ParkingLotRequest(filter, number(parameters, "limit"), number(parameters, "scanLimit"),
				flag(parameters, "dryRun"), flag(parameters, "all"));
	}

	/**
	 * The scan limit asked for, or the default.
	 * @return the scan limit
	 */
	public int scanLimitOrDefault() {
		return (this.scanLimit != null) ? this.scanLimit : ParkingLotService.DEFAULT_SCAN_LIMIT;
	}

	private static @Nullable String text(Map<String, ?> parameters, String name) {
		Object value = parameters.get(name);
		return (value != null && !value.toString().isBlank()) ? value.toString().trim() : null;
	}

	private static @Nullable Integer number(Map<String, ?> parameters, String name) {
		String value = text(parameters, name);
		if (value == null) {
			return null;
		}
		try {
			return Integer.valueOf(value);
		}
		catch (NumberFormatException ex) {
			throw new ParkingLotRequestException(name + " must be a whole number but was '" + value + "'");
		}
	}

	private static boolean flag(Map<String, ?> parameters, String name) {
		String value = text(parameters, name);
		if (value == null || value.equalsIgnoreCase("false")) {
			return false;
		}
		if (value.equalsIgnoreCase("true")) {
			return true;
		}
		throw new ParkingLotRequestException(name + " must be true or false but was '" + value + "'");
	}

}
