package io.github.tieredretry.testbrokers;

import java.io.IOException;
import java.net.ServerSocket;

/**
 * Ports for tests that must not reach a broker.
 */
public final class Ports {

	private Ports() {
	}

	/**
	 * A local port nothing listens on (it was free a moment ago).
	 * @return the port
	 */
	public static int unused() {
		try (ServerSocket socket = new ServerSocket(0)) {
			return socket.getLocalPort();
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
	}

}
