"""The arithmetic of the paired benchmarks (bench/clients.py) and how ``--only`` puts a section in place."""

from bench import local_http
from bench.__main__ import replace_section
from bench.clients import Measured, Rate, Rounds, Spread

REPORT = """# shopfeed benchmarks

- taken: 2026-11-25 22:11 UTC
- the local-http section re-measured alone on 2026-11-26 10:00 UTC (`python -m bench --only local-http`)

## Cold start

imports

## The local stack

old figures

### What the gap is made of

old breakdown

## Fanout

fanout figures
"""


def _rate(per_second: float, **cpu: float) -> Rate:
    return Rate(answered=int(per_second * 10), seconds=10.0, cpu=cpu)


def test_a_spread_shows_the_median_and_the_range_of_its_rounds() -> None:
    # given three rounds
    spread = Spread([0.9, 0.7, 0.8])
    # then the text is the median, then min-max
    assert spread.text(2) == "0.80 (0.70–0.90)"


def test_each_ratio_divides_two_rates_of_the_same_round() -> None:
    # given a machine that halves its speed between two rounds, slowing both paths alike
    rounds = Rounds(baseline=[_rate(200), _rate(100)], measured={"http": [_rate(160), _rate(80)]})
    # then every round's ratio is 0.8, though the rates of the paths, taken apart, spread 2×
    assert rounds.ratios("http").samples == [0.8, 0.8]
    assert rounds.rates().text() == "150 (100–200)"


def test_cpu_per_call_is_the_median_over_rounds_by_process() -> None:
    # given two rounds where the stack spent 10 ms and 30 ms over 100 calls
    rounds = Rounds(baseline=[_rate(10, stack=0.01), _rate(10, stack=0.03)], measured={})
    # then a call cost the stack 0.2 ms, the median of 0.1 and 0.3
    assert rounds.cpu_ms() == {"stack": 0.2}


def test_a_path_below_its_goal_at_some_client_count_is_named() -> None:
    # given 0.85× at one client and 0.7× at four
    measured = Measured(
        rounds={
            1: Rounds(baseline=[_rate(100)], measured={"http": [_rate(85)]}),
            4: Rounds(baseline=[_rate(100)], measured={"http": [_rate(70)]}),
        },
        load=(1.0, 1.0),
    )
    # then only four clients fall short of 0.8× and 0.9×
    shortfalls = measured.shortfalls("http", {1: 0.8, 4: 0.9}, "local HTTP")
    assert shortfalls == ["local HTTP at 0.70× with 4 client(s), below the 0.9× goal"]


def test_a_section_measured_alone_replaces_its_own_and_keeps_the_others() -> None:
    # when the local stack's section is measured again
    section = "## The local stack\n\nnew figures\n"
    report = replace_section(REPORT, "## The local stack", section, "local-http", "2026-11-27 04:00 UTC")
    # then its figures and its subsection are replaced, the sections around it kept, and one note says when
    assert "old figures" not in report
    assert "old breakdown" not in report
    assert "new figures" in report
    assert "## Cold start\n\nimports" in report
    assert "## Fanout\n\nfanout figures" in report
    assert report.count("re-measured alone") == 1
    assert "re-measured alone on 2026-11-27 04:00 UTC" in report


def test_a_section_the_report_does_not_have_yet_is_added_at_its_end() -> None:
    # when the orders section is measured alone for the first time
    section = "## Orders\n\norder figures\n"
    report = replace_section(REPORT, "## Orders", section, "orders", "2026-11-27 04:00 UTC")
    # then it closes the report, and the earlier note of another section stays
    assert report.endswith("## Orders\n\norder figures\n")
    assert "the local-http section re-measured alone on 2026-11-26" in report
    assert "the orders section re-measured alone on 2026-11-27" in report


def test_the_local_http_gap_is_split_into_each_process_cpu_and_the_waiting() -> None:
    # given one client at 200 requests/s in-process (5 ms each: 4 ms in the handler, 1 ms in the engine) and
    # 100 over HTTP (10 ms each), where a request costs the stack 1 ms, the worker 4.5 ms and the client 0.5 ms
    in_process = _rate(200, clients=8.0, **{"DynamoDB Local": 2.0})
    over_http = _rate(100, clients=0.5, stack=1.0, **{"CommerceApiFunction worker 0": 4.5, "DynamoDB Local": 1.0})
    rounds = Rounds(baseline=[in_process], measured={local_http.RESTORED: [over_http]})
    report = local_http.LocalHttp({1: rounds, 4: rounds}, (1.0, 1.0), {"HTTP parsing": 20.0, "JWT, cached": 4.0})
    # then the 5 ms of wall time are 2 ms of CPU by process and 3 ms of waiting
    text = report.markdown()
    assert "takes 5.00 ms more wall time than in-process. 2.00 ms of it is CPU" in text
    assert "the stack process 1.00 ms" in text
    assert "the worker 0.50 ms beyond" in text
    assert "the HTTP client 0.50 ms" in text
    assert "The other 3.00 ms is the process hop's waiting" in text


def test_restored_and_on_demand_workers_each_have_their_rows_and_the_goal_is_the_restored_ones() -> None:
    # given four clients at 100 requests/s in-process in both pairings, where the handler costs the in-process
    # clients 10 ms per request, restored workers 10.5 ms and on-demand ones 12 ms; restored HTTP at 95/s and
    # on-demand at 85/s; and one client at 100/s on every side
    in_process = _rate(100, clients=10.0)
    restored = _rate(95, **{"CommerceApiFunction worker 0": 5.0, "CommerceApiFunction worker 1": 4.975})
    on_demand = _rate(85, **{"CommerceApiFunction worker 0": 10.2})
    one = _rate(100, clients=0.5, **{"CommerceApiFunction worker 0": 0.5})
    report = local_http.LocalHttp(
        {1: Rounds([one], {local_http.RESTORED: [one]}), 4: Rounds([in_process], {local_http.RESTORED: [restored]})},
        (1.0, 1.0),
        on_demand={1: Rounds([one], {local_http.HTTP: [one]}), 4: Rounds([in_process], {local_http.HTTP: [on_demand]})},
    )
    # then each path's row divides by its own in-process rounds, the restored one's ratio in bold ...
    text = report.markdown()
    assert "| restored from a SnapStart snapshot | 4 | 95 (95–95) | 100 (100–100) | **0.95 (0.95–0.95)** |" in text
    assert "| each running init (on demand) | 4 | 85 (85–85) | 100 (100–100) | 0.85 (0.85–0.85) |" in text
    # ... the workers' CPU at four clients is set beside the in-process clients' ...
    assert "CPU per request was 10.00 ms in the in-process clients, 10.50 ms in workers restored" in text
    assert "and 12.00 ms in workers that each ran init" in text
    # ... and only the restored workers are held to the goals (0.95 at four clients meets 0.9)
    assert report.below_goal() == []


def test_the_apis_workers_are_one_figure_and_the_consumers_workers_another() -> None:
    # given CPU by process as the rounds record it
    cpu = {
        "CommerceApiFunction worker 0": 1.0,
        "CommerceApiFunction worker 3": 0.5,
        "CommerceStreamFunction worker 0": 0.25,
        "OutboxRelayFunction worker 1": 0.25,
        "stack": 0.5,
    }
    # then a request's worker is counted apart from the consumers that follow its writes
    assert local_http.grouped(cpu) == {"function workers": 1.5, "other functions' workers": 0.5, "stack": 0.5}


def test_the_stack_alone_is_shown_in_cpu_microseconds_per_request_with_its_workers_summed() -> None:
    # given rounds of the stack alone at four clients behind each function: 1,000 requests each, the stack
    # 0.3 s, two workers 0.05 s each; and 0.6 s for the stack when the function sleeps first
    at_once = {4: [_rate(100, stack=0.3, clients=0.2, **{"worker 0": 0.05, "worker 1": 0.05})]}
    asleep = {4: [_rate(100, stack=0.6, clients=0.2, **{"worker 0": 0.05, "worker 1": 0.05})]}
    alone = {"answers at once": at_once, "answers after 4 ms asleep": asleep}
    measured = local_http.LocalHttp(rounds={}, load=(0.0, 0.0), alone=alone)
    # then a request cost the stack 300 µs (600 µs), the workers together 100 µs and the clients 200 µs
    lines = "\n".join(measured.alone_table())
    assert "| answers at once | 4 | 100 (100–100) | 300 (300–300) | 100 (100–100) | 200 (200–200) |" in lines
    assert "| answers after 4 ms asleep | 4 | 100 (100–100) | 600 (600–600) | 100 (100–100) | 200 (200–200) |" in lines


def test_the_stack_alone_at_one_client_compares_a_function_that_answers_at_once_with_one_that_sleeps_first() -> None:
    # given one client's rounds: the stack 100 µs per request behind the first function, 300 µs behind the second
    at_once = {1: [_rate(100, stack=0.1, clients=0.05, **{"worker 0": 0.03})]}
    asleep = {1: [_rate(100, stack=0.3, clients=0.08, **{"worker 0": 0.09})]}
    alone = dict(zip(local_http.ALONE, (at_once, asleep), strict=True))
    measured = local_http.LocalHttp(rounds={}, load=(0.0, 0.0), alone=alone)
    # then the report sets the two side by side for each process
    text = "\n".join(measured.alone_table())
    assert "costs the stack 100 µs per request behind the function that answers at once and 300 µs" in text
    assert "(the worker 30 and 90 µs, the HTTP client 50 and 80 µs)" in text
