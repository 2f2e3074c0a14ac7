package io.github.tieredretry.reliability;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.tieredretry.testsupport.TestBroker;

/**
 * A TCP proxy in front of the test broker that a test can break, so that an application
 * loses its broker without anybody touching the broker itself (which other tests share):
 * <ul>
 * <li>{@link #cut()}: every proxied connection is closed and new ones are refused, like a
 * broker that went away; {@link #restore()} listens again on the same port;</li>
 * <li>{@link #freezeDownstream()}: bytes from the broker are held back (connections stay
 * open), like a network that stalls, so that publisher confirms never arrive;
 * {@link #freezeUpstream()} holds back the bytes to the broker, so that acks never
 * arrive; {@link #thaw()} lets them through.</li>
 * </ul>
 */
final class TcpProxy implements AutoCloseable {

	private final String upstreamHost;

	private final int upstreamPort;

	private final int port;

	private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();

	private final AtomicInteger accepted = new AtomicInteger();

	private final Object frozenLock = new Object();

	private boolean downstreamFrozen;

	private boolean upstreamFrozen;

	private volatile ServerSocket server;

	private volatile Thread acceptor;

	private volatile boolean closed;

	TcpProxy(String upstreamHost, int upstreamPort) {
		this.upstreamHost = upstreamHost;
		this.upstreamPort = upstreamPort;
		this.server = listen(0);
		this.port = this.server.getLocalPort();
		this.acceptor = startAccepting(this.server);
	}

	/**
	 * A proxy in front of the test broker.
	 * @return the proxy, listening
	 */
	static TcpProxy toTestBroker() {
		TestBroker upstream = TestBroker.get();
		return new TcpProxy(upstream.host(), upstream.port());
	}

	int port() {
		return this.port;
	}

	/**
	 * Connections accepted so far.
	 * @return the count
	 */
	int accepted() {
		return this.accepted.get();
	}

	/** Close every proxied connection and refuse new ones. */
	synchronized void cut() {
		closeQuietly(this.server);
		this.sockets.forEach(TcpProxy::closeQuietly);
		this.sockets.clear();
		// The port is only released once the thread blocked in accept() has left it.
		try {
			this.acceptor.join(5000);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	/** Accept connections again, on the same port. */
	synchronized void restore() {
		if (this.server.isClosed()) {
			this.server = listen(this.port);
			this.acceptor = startAccepting(this.server);
		}
	}

	/** Hold back everything the broker sends until {@link #thaw()}. */
	void freezeDownstream() {
		synchronized (this.frozenLock) {
			this.downstreamFrozen = true;
		}
	}

	/**
	 * Hold back everything sent to the broker until {@link #thaw()} (or {@link #cut()},
	 * which drops it).
	 */
	void freezeUpstream() {
		synchronized (this.frozenLock) {
			this.upstreamFrozen = true;
		}
	}

	void thaw() {
		synchronized (this.frozenLock) {
			this.downstreamFrozen = false;
			this.upstreamFrozen = false;
			this.frozenLock.notifyAll();
		}
	}

	private ServerSocket listen(int port) {
		try {
			ServerSocket socket = new ServerSocket();
			socket.setReuseAddress(true);
			socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
			return socket;
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot listen on port " + port, ex);
		}
	}

	private Thread startAccepting(ServerSocket listening) {
		Thread acceptor = new Thread(() -> {
			while (!listening.isClosed()) {
				try {
					Socket client = listening.accept();
					connect(client);
				}
				catch (IOException ex) {
					// Cut or closed: stop accepting.
				}
			}
		}, "tcp-proxy-accept-" + listening.getLocalPort());
		acceptor.setDaemon(true);
		acceptor.start();
		return acceptor;
	}

	private void connect(Socket client) {
		Socket upstream;
		try {
			upstream = new Socket(this.upstreamHost, this.upstreamPort);
		}
		catch (IOException ex) {
			closeQuietly(client);
			return;
		}
		this.accepted.incrementAndGet();
		this.sockets.add(client);
		this.sockets.add(upstream);
		pump(client, upstream, false);
		pump(upstream, client, true);
	}

	private void pump(Socket from, Socket to, boolean downstream) {
		Thread pump = new Thread(() -> {
			byte[] buffer = new byte[16 * 1024];
			try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
				int read;
				while ((read = in.read(buffer)) != -1) {
					awaitThawed(downstream);
					out.write(buffer, 0, read);
					out.flush();
				}
			}
			catch (IOException | InterruptedException ex) {
				// One side went away: take the other one down too.
			}
			finally {
				closeQuietly(from);
				closeQuietly(to);
				this.sockets.remove(from);
				this.sockets.remove(to);
			}
		}, "tcp-proxy-" + (downstream ? "down" : "up"));
		pump.setDaemon(true);
		pump.start();
	}

	private void awaitThawed(boolean downstream) throws InterruptedException {
		synchronized (this.frozenLock) {
			while ((downstream ? this.downstreamFrozen : this.upstreamFrozen) && !this.closed
					&& !Thread.currentThread().isInterrupted()) {
				this.frozenLock.wait(100);
			}
		}
	}

	@Override
	public void close() {
		this.closed = true;
		thaw();
		cut();
	}

	private static void closeQuietly(AutoCloseable closeable) {
		try {
			closeable.close();
		}
		catch (Exception ex) {
			// Closing anyway.
		}
	}

}
