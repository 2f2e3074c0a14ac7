package io.github.tieredretry.benchmarks.report;

import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Tests for {@link Summary} and {@link RatioSeries}.
 */
class SummaryTests {

	@Test
	void medianOfAnOddCountIsTheMiddleValue() {
		assertThat(Summary.of(List.of(5.0, 1.0, 3.0))).isEqualTo(new Summary(1, 3, 5));
	}

	@Test
	void medianOfAnEvenCountIsTheMeanOfTheMiddleValues() {
		assertThat(Summary.of(List.of(4.0, 1.0, 3.0, 10.0))).isEqualTo(new Summary(1, 3.5, 10));
	}

	@Test
	void nothingCannotBeSummarized() {
		assertThatIllegalArgumentException().isThrownBy(() -> Summary.of(List.of()));
	}

	@Test
	void percentilesUseTheNearestRank() {
		long[] sorted = new long[100];
		for (int index = 0; index < sorted.length; index++) {
			sorted[index] = index + 1;
		}
		assertThat(Summary.percentile(sorted, 50)).isEqualTo(50);
		assertThat(Summary.percentile(sorted, 99)).isEqualTo(99);
		assertThat(Summary.percentile(sorted, 100)).isEqualTo(100);
		assertThat(Summary.percentile(new long[] { 7 }, 99)).isEqualTo(7);
	}

	@Test
	void ratiosArePairedRepeatByRepeatAndJudgedOnTheirMedian() {
		SideSeries numerator = new SideSeries("n", List.of(9.0, 20.0, 30.0));
		SideSeries denominator = new SideSeries("d", List.of(10.0, 20.0, 20.0));

		RatioSeries ratio = RatioSeries.of("n ÷ d", numerator, denominator, 1.0);

		assertThat(ratio.ratios()).containsExactly(0.9, 1.0, 1.5);
		assertThat(ratio.met()).isTrue();
		assertThat(RatioSeries.of("n ÷ d", numerator, denominator, 1.01).met()).isFalse();
	}

	@Test
	void ratiosOfRatiosArePairedRepeatByRepeat() {
		RatioSeries numerator = new RatioSeries("a", List.of(0.8, 0.5), Double.NaN);
		RatioSeries denominator = new RatioSeries("b", List.of(0.8, 0.625), Double.NaN);

		assertThat(RatioSeries.of("a ÷ b", numerator, denominator, Double.NaN).ratios()).containsExactly(1.0, 0.8);
	}

	@Test
	void aRatioWithoutTargetIsShownForInformation() {
		RatioSeries ratio = new RatioSeries("info", List.of(0.5), Double.NaN);

		assertThat(ratio.hasTarget()).isFalse();
		assertThat(ratio.met()).isTrue();
	}

}
