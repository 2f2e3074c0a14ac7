package io.github.tieredretry.benchmarks.report;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.FontMetrics;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.Stroke;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

import javax.imageio.ImageIO;

/**
 * PNG charts drawn with Java2D (headless), so that the harness needs no plotting library.
 */
public final class Charts {

	private static final int WIDTH = 900;

	private static final int HEIGHT = 480;

	/** The height of a line of a legend. */
	private static final int LEGEND_LINE = 20;

	private static final Color[] PALETTE = { new Color(0x2E7D32), new Color(0x1565C0), new Color(0xC62828),
			new Color(0x6A1B9A), new Color(0xEF6C00) };

	private static final Color GRID = new Color(0xE0E0E0);

	private static final Color TEXT = new Color(0x212121);

	private static final Color TARGET = new Color(0xD32F2F);

	private static final Font TITLE_FONT = new Font(Font.SANS_SERIF, Font.BOLD, 17);

	private static final Font LABEL_FONT = new Font(Font.SANS_SERIF, Font.PLAIN, 13);

	private static final Font SMALL_FONT = new Font(Font.SANS_SERIF, Font.PLAIN, 11);

	private Charts() {
	}

	/**
	 * A bar with the median of repeated measurements, and a whisker from their minimum to
	 * their maximum.
	 *
	 * @param label the bar's label
	 * @param summary the measurements
	 */
	public record Bar(String label, Summary summary) {
	}

	/**
	 * One series of a grouped bar chart: a value per category.
	 *
	 * @param name the series' name, shown in the legend
	 * @param values one value per category
	 */
	public record Series(String name, List<Double> values) {
	}

	/**
	 * Events along a time axis, for a histogram over time.
	 *
	 * @param name the series' name, shown in the legend
	 * @param millis when each event happened, in milliseconds from the axis' origin
	 */
	public record Timeline(String name, long[] millis) {
	}

	/**
	 * A ratio with its target, for the headline chart.
	 *
	 * @param label the ratio
	 * @param summary its repeats
	 * @param target the smallest acceptable median
	 */
	public record Ratio(String label, Summary summary, double target) {
	}

	/**
	 * Vertical bars (medians) with min–max whiskers and the median written above each
	 * bar.
	 * @param file the PNG to write
	 * @param title the title
	 * @param unit the y axis' unit
	 * @param bars the bars
	 * @param logScale whether the y axis is logarithmic (for values orders of magnitude
	 * apart)
	 */
	public static void bars(Path file, String title, String unit, List<Bar> bars, boolean logScale) {
		// Wider with many bars, so that each label still fits under its bar.
		int width = Math.max(WIDTH, 95 + 30 + 150 * bars.size());
		Canvas canvas = new Canvas(title, width, HEIGHT);
		Plot plot = new Plot(95, 60, width - 30, HEIGHT - 95);
		double top = bars.stream().mapToDouble((bar) -> bar.summary().max()).max().orElse(1);
		double bottom = logScale ? bars.stream().mapToDouble((bar) -> bar.summary().min()).min().orElse(1) : 0;
		Axis axis = logScale ? Axis.log(bottom, top) : Axis.linear(0, top * 1.12);
		canvas.yAxis(plot, axis, unit);
		double slot = (double) plot.width() / bars.size();
		double barWidth = Math.min(140, slot * 0.55);
		for (int index = 0; index < bars.size(); index++) {
			Bar bar = bars.get(index);
			double center = plot.left() + slot * (index + 0.5);
			int yMedian = plot.y(axis, bar.summary().median());
			Graphics2D graphics = canvas.graphics();
			graphics.setColor(PALETTE[index % PALETTE.length]);
			graphics.fillRect((int) (center - barWidth / 2), yMedian, (int) barWidth, plot.bottom() - yMedian);
			canvas.whisker((int) center, plot.y(axis, bar.summary().min()), plot.y(axis, bar.summary().max()));
			canvas.centered(format(bar.summary().median()), (int) center,
					Math.min(yMedian, plot.y(axis, bar.summary().max())) - 8, LABEL_FONT);
			canvas.wrappedLabel(bar.label(), (int) center, plot.bottom() + 20, (int) slot - 10);
		}
		canvas.footnote("Bars: median over the repeats; whiskers: min to max.");
		canvas.write(file);
	}

	/**
	 * Grouped vertical bars: for each category, one bar per series.
	 * @param file the PNG to write
	 * @param title the title
	 * @param unit the y axis' unit
	 * @param categories the categories along the x axis
	 * @param series the series
	 * @param logScale whether the y axis is logarithmic
	 */
	public static void groupedBars(Path file, String title, String unit, List<String> categories, List<Series> series,
			boolean logScale) {
		Canvas canvas = new Canvas(title);
		List<String> names = series.stream().map(Series::name).toList();
		// Long names take more than one legend line: the plot starts below them.
		int legendLines = canvas.legendLines(names, 95);
		Plot plot = new Plot(95, 80 + LEGEND_LINE * (legendLines - 1), WIDTH - 30, HEIGHT - 75);
		double top = series.stream()
			.flatMap((s) -> s.values().stream())
			.mapToDouble(Double::doubleValue)
			.max()
			.orElse(1);
		Axis axis = logScale ? Axis.log(1, top) : Axis.linear(0, top * 1.12);
		canvas.yAxis(plot, axis, unit);
		double slot = (double) plot.width() / categories.size();
		double barWidth = Math.min(90, slot * 0.8 / series.size());
		Graphics2D graphics = canvas.graphics();
		for (int category = 0; category < categories.size(); category++) {
			double groupLeft = plot.left() + slot * category + (slot - barWidth * series.size()) / 2;
			for (int index = 0; index < series.size(); index++) {
				double value = series.get(index).values().get(category);
				int x = (int) (groupLeft + barWidth * index);
				int y = plot.y(axis, Math.max(value, logScale ? 1 : 0));
				graphics.setColor(PALETTE[index % PALETTE.length]);
				graphics.fillRect(x + 2, y, (int) barWidth - 4, plot.bottom() - y);
				canvas.centered(format(value), (int) (x + barWidth / 2), y - 6, SMALL_FONT);
			}
			canvas.wrappedLabel(categories.get(category), (int) (plot.left() + slot * (category + 0.5)),
					plot.bottom() + 20, (int) slot - 10);
		}
		canvas.legend(names, plot.left(), 48);
		canvas.write(file);
	}

	/**
	 * The headline: each ratio's median (dot) and min–max (whisker) on a log scale, with
	 * its target.
	 * @param file the PNG to write
	 * @param title the title
	 * @param ratios the ratios
	 */
	public static void ratios(Path file, String title, List<Ratio> ratios) {
		int rowHeight = 62;
		int height = Math.max(260, 110 + rowHeight * ratios.size());
		Canvas canvas = new Canvas(title, WIDTH, height);
		Plot plot = new Plot(330, 60, WIDTH - 40, height - 50);
		double low = Math.min(0.5, ratios.stream().mapToDouble((ratio) -> ratio.summary().min()).min().orElse(1));
		double high = Math.max(2,
				ratios.stream()
					.mapToDouble((ratio) -> Double.isNaN(ratio.target()) ? ratio.summary().max()
							: Math.max(ratio.summary().max(), ratio.target()))
					.max()
					.orElse(1));
		Axis axis = Axis.log(low, high);
		Graphics2D graphics = canvas.graphics();
		for (double tick : axis.ticks()) {
			int x = plot.x(axis, tick);
			graphics.setColor(GRID);
			graphics.drawLine(x, plot.top(), x, plot.bottom());
			canvas.centered(format(tick) + "×", x, plot.bottom() + 18, SMALL_FONT);
		}
		for (int index = 0; index < ratios.size(); index++) {
			Ratio ratio = ratios.get(index);
			int y = plot.top() + rowHeight * index + rowHeight / 2;
			boolean hasTarget = !Double.isNaN(ratio.target());
			boolean met = !hasTarget || ratio.summary().median() >= ratio.target();
			graphics.setColor(TEXT);
			graphics.setFont(LABEL_FONT);
			drawLeftWrapped(graphics, ratio.label(), 15, y - 4, plot.left() - 30);
			if (hasTarget) {
				int xTarget = plot.x(axis, ratio.target());
				graphics.setColor(TARGET);
				graphics.setStroke(new BasicStroke(2f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10f,
						new float[] { 4f, 3f }, 0f));
				graphics.drawLine(xTarget, y - 18, xTarget, y + 18);
			}
			graphics.setStroke(new BasicStroke(2f));
			graphics.setColor(TEXT);
			graphics.drawLine(plot.x(axis, ratio.summary().min()), y, plot.x(axis, ratio.summary().max()), y);
			graphics.drawLine(plot.x(axis, ratio.summary().min()), y - 6, plot.x(axis, ratio.summary().min()), y + 6);
			graphics.drawLine(plot.x(axis, ratio.summary().max()), y - 6, plot.x(axis, ratio.summary().max()), y + 6);
			graphics.setColor(hasTarget ? (met ? PALETTE[0] : PALETTE[2]) : PALETTE[1]);
			int xMedian = plot.x(axis, ratio.summary().median());
			graphics.fillOval(xMedian - 7, y - 7, 14, 14);
			String note = hasTarget ? " (target " + format(ratio.target()) + "×" + (met ? ", met)" : ", missed)")
					: " (no target)";
			canvas.centered(format(ratio.summary().median()) + "×" + note, xMedian, y - 14, SMALL_FONT);
		}
		graphics.setStroke(new BasicStroke(1f));
		canvas.footnote("Dot: median ratio over the repeats; whisker: min to max; dashed red: target (log scale).");
		canvas.write(file);
	}

	/**
	 * A histogram of lateness, with percentile markers and the target.
	 * @param file the PNG to write
	 * @param title the title
	 * @param result the lateness measurements
	 * @param targetMillis the p99 target
	 */
	public static void latenessHistogram(Path file, String title, LatenessResult result, long targetMillis) {
		Canvas canvas = new Canvas(title);
		Plot plot = new Plot(80, 60, WIDTH - 30, HEIGHT - 75);
		long[] sorted = result.sortedLateness();
		long p50 = Summary.percentile(sorted, 50);
		long p99 = Summary.percentile(sorted, 99);
		long min = Math.min(0, sorted[0]);
		// Show the bulk of the distribution; anything beyond goes into one overflow bin.
		long upper = Math.max(Math.max(p99 * 2, p99 + 20), 20);
		upper = Math.min(upper, sorted[sorted.length - 1] + 1);
		upper = Math.max(upper, min + 10);
		int bins = 60;
		double binWidth = Math.max(1, Math.ceil((double) (upper - min) / bins));
		bins = (int) Math.ceil((upper - min) / binWidth);
		long[] counts = new long[bins + 1];
		for (long value : sorted) {
			int bin = (int) Math.floor((value - min) / binWidth);
			counts[Math.min(bin, bins)]++;
		}
		long highest = 0;
		for (long count : counts) {
			highest = Math.max(highest, count);
		}
		Axis yAxis = Axis.linear(0, highest * 1.15);
		canvas.yAxis(plot, yAxis, "retries");
		Axis xAxis = Axis.linear(min, min + binWidth * (bins + 1));
		Graphics2D graphics = canvas.graphics();
		for (double tick : xAxis.ticks()) {
			int x = plot.x(xAxis, tick);
			canvas.centered(format(tick), x, plot.bottom() + 18, SMALL_FONT);
		}
		canvas.centered("lateness after retry-due (ms)" + ((counts[bins] > 0) ? "; last bar: ≥ " + upper + " ms" : ""),
				(plot.left() + plot.right()) / 2, plot.bottom() + 40, LABEL_FONT);
		for (int bin = 0; bin <= bins; bin++) {
			if (counts[bin] == 0) {
				continue;
			}
			int x0 = plot.x(xAxis, min + bin * binWidth);
			int x1 = plot.x(xAxis, min + (bin + 1) * binWidth);
			int y = plot.y(yAxis, counts[bin]);
			graphics.setColor((bin == bins) ? PALETTE[4] : PALETTE[1]);
			graphics.fillRect(x0, y, Math.max(1, x1 - x0 - 1), plot.bottom() - y);
		}
		marker(canvas, plot, xAxis, p50, "p50 " + p50 + " ms", PALETTE[0], 0);
		marker(canvas, plot, xAxis, p99, "p99 " + p99 + " ms", PALETTE[3], 1);
		if (targetMillis <= xAxis.max()) {
			marker(canvas, plot, xAxis, targetMillis, "target p99 ≤ " + targetMillis + " ms", TARGET, 2);
		}
		canvas.footnote(result.messages() + " retries through tier " + result.tier() + " at " + result.perSecond()
				+ " msg/s; early: " + result.earlyCount() + "; max " + sorted[sorted.length - 1] + " ms"
				+ ((targetMillis > xAxis.max()) ? "; target p99 ≤ " + targetMillis + " ms is off this scale" : "")
				+ ".");
		canvas.write(file);
	}

	/**
	 * Histograms over time, one per series, drawn over each other: how many events fall
	 * in each bin.
	 * @param file the PNG to write
	 * @param title the title
	 * @param xLabel what the time axis measures
	 * @param unit the y axis' unit
	 * @param series the series
	 * @param binMillis the width of a bin
	 * @param footnote what the chart shows
	 */
	public static void timelines(Path file, String title, String xLabel, String unit, List<Timeline> series,
			long binMillis, String footnote) {
		Canvas canvas = new Canvas(title);
		Plot plot = new Plot(80, 80, WIDTH - 30, HEIGHT - 75);
		long end = series.stream().flatMapToLong((timeline) -> Arrays.stream(timeline.millis())).max().orElse(0);
		// From the whole second before the first event: the time before it is empty.
		long first = series.stream().flatMapToLong((timeline) -> Arrays.stream(timeline.millis())).min().orElse(0);
		long origin = Math.max(0, first / 1000 * 1000);
		int bins = (int) ((end - origin) / binMillis) + 1;
		List<long[]> counts = new ArrayList<>();
		long highest = 1;
		for (Timeline timeline : series) {
			long[] binned = new long[bins];
			for (long millis : timeline.millis()) {
				binned[(int) (Math.max(0, millis - origin) / binMillis)]++;
			}
			counts.add(binned);
			highest = Math.max(highest, Arrays.stream(binned).max().orElse(0));
		}
		Axis yAxis = Axis.linear(0, highest * 1.12);
		canvas.yAxis(plot, yAxis, unit);
		Axis xAxis = Axis.linear(origin / 1000.0, (origin + (double) bins * binMillis) / 1000);
		for (double tick : xAxis.ticks()) {
			canvas.centered(format(tick), plot.x(xAxis, tick), plot.bottom() + 18, SMALL_FONT);
		}
		canvas.centered(xLabel, (plot.left() + plot.right()) / 2, plot.bottom() + 40, LABEL_FONT);
		Graphics2D graphics = canvas.graphics();
		for (int index = 0; index < series.size(); index++) {
			Color color = PALETTE[(index == 0) ? 2 : 0];
			graphics.setColor(new Color(color.getRed(), color.getGreen(), color.getBlue(), 150));
			long[] binned = counts.get(index);
			for (int bin = 0; bin < bins; bin++) {
				if (binned[bin] == 0) {
					continue;
				}
				int x0 = plot.x(xAxis, (origin + (double) bin * binMillis) / 1000);
				int x1 = plot.x(xAxis, (origin + (double) (bin + 1) * binMillis) / 1000);
				int y = plot.y(yAxis, binned[bin]);
				graphics.fillRect(x0, y, Math.max(1, x1 - x0 - 1), plot.bottom() - y);
			}
		}
		int offset = plot.left();
		graphics.setFont(LABEL_FONT);
		for (int index = 0; index < series.size(); index++) {
			graphics.setColor(PALETTE[(index == 0) ? 2 : 0]);
			graphics.fillRect(offset, 48 - 11, 14, 14);
			graphics.setColor(TEXT);
			graphics.drawString(series.get(index).name(), offset + 20, 48 + 1);
			offset += 40 + graphics.getFontMetrics().stringWidth(series.get(index).name());
		}
		canvas.footnote(footnote);
		canvas.write(file);
	}

	private static void marker(Canvas canvas, Plot plot, Axis axis, double value, String label, Color color, int row) {
		Graphics2D graphics = canvas.graphics();
		int x = plot.x(axis, value);
		graphics.setColor(color);
		Stroke stroke = graphics.getStroke();
		graphics.setStroke(
				new BasicStroke(2f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10f, new float[] { 5f, 4f }, 0f));
		graphics.drawLine(x, plot.top(), x, plot.bottom());
		graphics.setStroke(stroke);
		graphics.setFont(SMALL_FONT);
		graphics.drawString(label, x + 5, plot.top() + 14 + row * 15);
	}

	private static void drawLeftWrapped(Graphics2D graphics, String text, int x, int y, int width) {
		List<String> lines = wrap(text, graphics.getFontMetrics(), width);
		int lineHeight = graphics.getFontMetrics().getHeight();
		int start = y - (lines.size() - 1) * lineHeight / 2;
		for (int index = 0; index < lines.size(); index++) {
			graphics.drawString(lines.get(index), x, start + index * lineHeight + 5);
		}
	}

	private static List<String> wrap(String text, FontMetrics metrics, int width) {
		List<String> lines = new ArrayList<>();
		StringBuilder line = new StringBuilder();
		for (String word : text.split(" ")) {
			String candidate = line.isEmpty() ? word : line + " " + word;
			if (metrics.stringWidth(candidate) > width && !line.isEmpty()) {
				lines.add(line.toString());
				line = new StringBuilder(word);
			}
			else {
				line = new StringBuilder(candidate);
			}
		}
		if (!line.isEmpty()) {
			lines.add(line.toString());
		}
		return lines;
	}

	static String format(double value) {
		double magnitude = Math.abs(value);
		if (magnitude >= 100 || value == Math.rint(value)) {
			return String.format(Locale.ROOT, "%,.0f", value);
		}
		if (magnitude >= 10) {
			return String.format(Locale.ROOT, "%.1f", value);
		}
		return String.format(Locale.ROOT, "%.2f", value);
	}

	/** The plot area, in pixels. */
	private record Plot(int left, int top, int right, int bottom) {

		int width() {
			return this.right - this.left;
		}

		int y(Axis axis, double value) {
			return (int) Math.round(this.bottom - axis.fraction(value) * (this.bottom - this.top));
		}

		int x(Axis axis, double value) {
			return (int) Math.round(this.left + axis.fraction(value) * (this.right - this.left));
		}

	}

	/** A linear or logarithmic axis. */
	private record Axis(double min, double max, boolean log) {

		static Axis linear(double min, double max) {
			return new Axis(min, (max > min) ? max : min + 1, false);
		}

		static Axis log(double min, double max) {
			double low = Math.pow(10, Math.floor(Math.log10(Math.max(min, 1e-9))));
			double high = Math.pow(10, Math.ceil(Math.log10(Math.max(max, low * 10))));
			return new Axis(low, (high > low) ? high : low * 10, true);
		}

		double fraction(double value) {
			if (this.log) {
				double clamped = Math.max(value, this.min);
				return (Math.log10(clamped) - Math.log10(this.min)) / (Math.log10(this.max) - Math.log10(this.min));
			}
			return (value - this.min) / (this.max - this.min);
		}

		List<Double> ticks() {
			List<Double> ticks = new ArrayList<>();
			if (this.log) {
				for (double tick = this.min; tick <= this.max * 1.0001; tick *= 10) {
					ticks.add(tick);
				}
				return ticks;
			}
			double step = niceStep((this.max - this.min) / 6);
			for (double tick = Math.ceil(this.min / step) * step; tick <= this.max + step * 1e-9; tick += step) {
				ticks.add(tick);
			}
			return ticks;
		}

		private static double niceStep(double rough) {
			double power = Math.pow(10, Math.floor(Math.log10(rough)));
			for (double factor : new double[] { 1, 2, 5, 10 }) {
				if (factor * power >= rough) {
					return factor * power;
				}
			}
			return 10 * power;
		}

	}

	/** An image being drawn. */
	private static final class Canvas {

		private final BufferedImage image;

		private final Graphics2D graphics;

		Canvas(String title) {
			this(title, WIDTH, HEIGHT);
		}

		Canvas(String title, int width, int height) {
			this.image = new BufferedImage(width, height, BufferedImage.TYPE_INT_RGB);
			this.graphics = this.image.createGraphics();
			this.graphics.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
			this.graphics.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING,
					RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
			this.graphics.setColor(Color.WHITE);
			this.graphics.fillRect(0, 0, width, height);
			this.graphics.setColor(TEXT);
			this.graphics.setFont(TITLE_FONT);
			this.graphics.drawString(title, 20, 30);
		}

		Graphics2D graphics() {
			return this.graphics;
		}

		void yAxis(Plot plot, Axis axis, String unit) {
			for (double tick : axis.ticks()) {
				int y = plot.y(axis, tick);
				this.graphics.setColor(GRID);
				this.graphics.drawLine(plot.left(), y, plot.right(), y);
				this.graphics.setColor(TEXT);
				this.graphics.setFont(SMALL_FONT);
				String label = format(tick);
				this.graphics.drawString(label, plot.left() - 8 - this.graphics.getFontMetrics().stringWidth(label),
						y + 4);
			}
			this.graphics.setColor(TEXT);
			this.graphics.drawLine(plot.left(), plot.top(), plot.left(), plot.bottom());
			this.graphics.drawLine(plot.left(), plot.bottom(), plot.right(), plot.bottom());
			this.graphics.setFont(LABEL_FONT);
			Graphics2D rotated = (Graphics2D) this.graphics.create();
			rotated.rotate(-Math.PI / 2);
			int width = rotated.getFontMetrics().stringWidth(unit);
			rotated.drawString(unit, -(plot.top() + plot.bottom()) / 2 - width / 2, 22);
			rotated.dispose();
		}

		void whisker(int x, int yMin, int yMax) {
			this.graphics.setColor(TEXT);
			this.graphics.setStroke(new BasicStroke(1.5f));
			this.graphics.drawLine(x, yMin, x, yMax);
			this.graphics.drawLine(x - 8, yMin, x + 8, yMin);
			this.graphics.drawLine(x - 8, yMax, x + 8, yMax);
			this.graphics.setStroke(new BasicStroke(1f));
		}

		void centered(String text, int x, int y, Font font) {
			this.graphics.setColor(TEXT);
			this.graphics.setFont(font);
			this.graphics.drawString(text, x - this.graphics.getFontMetrics().stringWidth(text) / 2, y);
		}

		void wrappedLabel(String text, int x, int y, int width) {
			this.graphics.setColor(TEXT);
			this.graphics.setFont(LABEL_FONT);
			FontMetrics metrics = this.graphics.getFontMetrics();
			List<String> lines = wrap(text, metrics, width);
			for (int index = 0; index < lines.size(); index++) {
				String line = lines.get(index);
				this.graphics.drawString(line, x - metrics.stringWidth(line) / 2, y + index * metrics.getHeight());
			}
		}

		/**
		 * Draw a legend, from left to right, continued on a new line where a name would
		 * not fit.
		 * @param names the series' names
		 * @param x where it starts
		 * @param y the baseline of its first line
		 */
		void legend(List<String> names, int x, int y) {
			this.graphics.setFont(LABEL_FONT);
			int offset = x;
			int line = y;
			for (int index = 0; index < names.size(); index++) {
				int width = legendWidth(names.get(index));
				if (offset > x && offset + width - 20 > this.image.getWidth() - 10) {
					offset = x;
					line += LEGEND_LINE;
				}
				this.graphics.setColor(PALETTE[index % PALETTE.length]);
				this.graphics.fillRect(offset, line - 11, 14, 14);
				this.graphics.setColor(TEXT);
				this.graphics.drawString(names.get(index), offset + 20, line + 1);
				offset += width;
			}
		}

		/**
		 * How many lines {@link #legend} takes.
		 * @param names the series' names
		 * @param x where it starts
		 * @return the lines
		 */
		int legendLines(List<String> names, int x) {
			this.graphics.setFont(LABEL_FONT);
			int offset = x;
			int lines = 1;
			for (String name : names) {
				int width = legendWidth(name);
				if (offset > x && offset + width - 20 > this.image.getWidth() - 10) {
					offset = x;
					lines++;
				}
				offset += width;
			}
			return lines;
		}

		// A swatch, the name and the gap to the next entry.
		private int legendWidth(String name) {
			return 40 + this.graphics.getFontMetrics(LABEL_FONT).stringWidth(name);
		}

		void footnote(String text) {
			this.graphics.setColor(new Color(0x616161));
			this.graphics.setFont(SMALL_FONT);
			this.graphics.drawString(text, 20, this.image.getHeight() - 10);
		}

		void write(Path file) {
			this.graphics.dispose();
			try {
				Files.createDirectories(file.toAbsolutePath().getParent());
				if (!ImageIO.write(this.image, "png", file.toFile())) {
					throw new IllegalStateException("No PNG writer available");
				}
			}
			catch (IOException ex) {
				throw new UncheckedIOException("Cannot write chart " + file, ex);
			}
		}

	}

}
