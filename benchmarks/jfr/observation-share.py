#!/usr/bin/env python3
"""Share of the listener threads' CPU samples spent in observation code, per side of the happy-path benchmark.

Run the happy path with a JFR recording that samples every millisecond, print its samples as JSON, then this:

  ./mvnw -B -pl benchmarks -Pbenchmarks -DskipTests verify -Dbenchmarks.only=happy-path -Dbenchmarks.repeats=3 \
      "-Dbenchmarks.jvm-args=-XX:StartFlightRecording=filename=/tmp/obs.jfr,settings=profile,jdk.ExecutionSample#period=1ms" \
      -Dbenchmarks.output=/tmp/bench-obs > /tmp/bench-obs.log
  jfr print --json --events jdk.ExecutionSample /tmp/obs.jfr > /tmp/obs.json
  python3 benchmarks/jfr/observation-share.py /tmp/bench-obs.log /tmp/obs.json

A sample belongs to the side whose round ended next after it (the harness logs each round's end, to the second);
samples of the first round of a run are left out. A sample counts as observation when its stack holds a frame of
io.micrometer (observation, tracing, the meter handler's timers), of the starter's observation package, or of a
class whose name has "Observation" in it (Spring AMQP's listener observation). The listener threads are named
happy-1, happy-2, ... on every side. Only running Java threads are sampled: a consumer thread waiting for its next
delivery costs nothing here.
"""
import collections
import json
import math
import re
import sys


def seconds(clock):
    hours, minutes, secs = map(int, clock.split(':'))
    return hours * 3600 + minutes * 60 + secs


def rounds(log_path):
    ends = []
    for line in open(log_path, encoding='utf-8'):
        match = re.match(r'(\d\d:\d\d:\d\d) \[happy-path\] (?:warm-up|repeat) \d+/\d+: (.*) = ', line)
        if match and (not ends or ends[-1] != (match.group(1), match.group(2))):
            ends.append((match.group(1), match.group(2)))
    return [(seconds(ends[i - 1][0]), seconds(end), side) for i, (end, side) in enumerate(ends) if i > 0]


def is_observation(frame_class):
    return (frame_class.startswith('io/micrometer/') or '/tieredretry/observation/' in frame_class
            or 'Observation' in frame_class.rsplit('/', 1)[-1])


def main(log_path, samples_path):
    windows = rounds(log_path)
    events = json.load(open(samples_path, encoding='utf-8'))['recording']['events']
    total = collections.Counter()
    observation = collections.Counter()
    for event in events:
        values = event['values']
        thread = values['sampledThread']['javaName'] or ''
        if not thread.startswith('happy-'):
            continue
        at = seconds(values['startTime'].split('T')[1][:8])
        side = next((name for start, end, name in windows if start < at <= end), None)
        if side is None:
            continue
        total[side] += 1
        if any(is_observation(frame['method']['type']['name']) for frame in values['stackTrace']['frames']):
            observation[side] += 1
    print('| Side | listener-thread samples | in observation code | share | 95% upper bound |')
    print('|---|---:|---:|---:|---:|')
    for side in sorted(total):
        count, hits = total[side], observation[side]
        # Wilson score upper bound of a binomial proportion
        z, p = 1.96, hits / count
        upper = (p + z * z / (2 * count) + z * math.sqrt(p * (1 - p) / count + z * z / (4 * count * count))) / (
            1 + z * z / count)
        print(f'| {side} | {count} | {hits} | {100 * p:.1f}% | {100 * upper:.1f}% |')


if __name__ == '__main__':
    main(sys.argv[1], sys.argv[2])
