package io.github.tieredretry.sample;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

import org.openqa.selenium.OutputType;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;

/**
 * Debian's headless Chromium driven by Debian's chromedriver: nothing is downloaded, and
 * a machine without them fails with a message saying how to install them (a browser test
 * that skipped itself would prove nothing).
 */
final class HeadlessChromium {

	static final File CHROMIUM = new File("/usr/bin/chromium");

	static final File CHROMEDRIVER = new File("/usr/bin/chromedriver");

	private HeadlessChromium() {
	}

	static ChromeDriver start(Path profile) {
		if (!CHROMIUM.canExecute() || !CHROMEDRIVER.canExecute()) {
			throw new IllegalStateException("The console's browser test needs " + CHROMIUM + " and " + CHROMEDRIVER
					+ ": apt-get install -y chromium chromium-driver (.ci/run installs them)");
		}
		// Selenium Manager must not look for (or download) a driver or a browser.
		System.setProperty("webdriver.chrome.driver", CHROMEDRIVER.getPath());
		ChromeDriverService service = new ChromeDriverService.Builder().usingDriverExecutable(CHROMEDRIVER)
			.usingAnyFreePort()
			.build();
		ChromeOptions options = new ChromeOptions();
		options.setBinary(CHROMIUM);
		options.addArguments("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
				"--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run",
				"--window-size=1440,1000", "--user-data-dir=" + profile.toAbsolutePath());
		ChromeDriver driver = new ChromeDriver(service, options);
		driver.manage().timeouts().scriptTimeout(Duration.ofSeconds(10));
		return driver;
	}

	/**
	 * Save a screenshot when {@code -Dconsole.screenshots=DIR} is given
	 * (docs/observability.md's pictures: {@code -Dconsole.screenshots=../docs/console}),
	 * otherwise under {@code target/console-screenshots}.
	 * @param driver the browser
	 * @param name the file name, without {@code .png}
	 */
	static void screenshot(ChromeDriver driver, String name) {
		Path directory = Path.of(System.getProperty("console.screenshots", "target/console-screenshots"));
		try {
			Files.createDirectories(directory);
			Files.write(directory.resolve(name + ".png"), driver.getScreenshotAs(OutputType.BYTES));
		}
		catch (IOException ex) {
			throw new IllegalStateException("Could not write the screenshot " + name + " to " + directory, ex);
		}
	}

}
