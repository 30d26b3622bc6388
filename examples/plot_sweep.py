#!/usr/bin/env python3
"""Plot one metric of a `trainsim sweep` CSV against one of its columns, one line per series.

    trainsim sweep examples/fig4_scaling.json -o fig4.csv
    python3 examples/plot_sweep.py fig4.csv --x gpus --y tokens_per_s --ideal -o fig4.png
    python3 examples/plot_sweep.py fig5.csv --x tp --y tokens_per_s --series pp -o fig5.png

Only rows whose status is "ok" are drawn. When several rows share a series and an x value (a
sweep over micro-batches, say), --agg picks one: max (default, the best plan, as the paper's
figures show), min or mean. --ideal adds, per series, the line of perfect linear scaling from the
series' smallest x. Needs matplotlib (Debian: apt install python3-matplotlib). Errors (a missing
file or column, a column without numbers, --ideal from x <= 0, an output it cannot write or
whose suffix names no image format, no matplotlib) are one line on stderr and exit status 2.
"""
import argparse
import csv
import math
import os
import sys
from collections import defaultdict


def fail(message):
    """One line on stderr and exit status 2, as trainsim does for bad input."""
    print(message, file=sys.stderr)
    sys.exit(2)


def number(text):
    """The cell's value, or None for text or an empty cell. nan and inf, which no sweep writes,
    are refused by check_rows before."""
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


def check_rows(path, rows, columns):
    """Fails naming the first row with fewer or more cells than the header, or a non-finite
    number in a plotted column: a file cut short or edited by hand, which would otherwise be
    drawn without its last point or with a gap."""
    for line, row in enumerate(rows, start=2):
        if None in row or any(value is None for value in row.values()):
            header = [key for key in row if key is not None]
            cells = sum(row[key] is not None for key in header) + len(row.get(None) or [])
            fail(f"error: {path}: line {line}: {cells} cells where the header has "
                 f"{len(header)}; expected a whole trainsim sweep row")
        for column in columns:
            value = number(row[column])
            if value is not None and not math.isfinite(value):
                fail(f"error: {path}: line {line}: column '{column}' holds '{row[column]}'; "
                     "expected a finite number (trainsim writes none other)")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("csv", help="trainsim sweep CSV output")
    p.add_argument("--x", required=True, help="column for the x axis, e.g. gpus")
    p.add_argument("--y", required=True, help="metric column, e.g. tokens_per_s")
    p.add_argument("--series", help="column whose values each get a line, e.g. tp")
    p.add_argument("--agg", choices=["max", "min", "mean"], default="max",
                   help="how to combine rows sharing a series and an x value (default max)")
    p.add_argument("--ideal", action="store_true",
                   help="add ideal linear scaling from each series' smallest x")
    p.add_argument("--logx", action="store_true", help="log2 x axis (default when x doubles)")
    p.add_argument("--logy", action="store_true",
                   help="log y axis (with --ideal, linear scaling is then a straight line)")
    p.add_argument("--title", help="plot title")
    p.add_argument("-o", "--output", required=True, help="image file to write (.png, .svg, .pdf)")
    args = p.parse_args(argv)

    # Checked before any work so that a missing package is one line, not a traceback.
    try:
        import matplotlib
    except ImportError:
        fail("error: matplotlib is not installed; expected it to draw the plot "
                 "(Debian: apt install python3-matplotlib, or pip install matplotlib)")
    try:
        with open(args.csv, newline="") as f:
            # A sharded output ends with a '#' trailer line; it is not a row.
            lines = [line for line in f if not line.startswith("#")]
        # `sweep --format json` writes JSON lines: its header "cells" were quoted whole as the
        # columns it has.
        if lines and lines[0].lstrip().startswith("{"):
            fail(f"error: {args.csv}: JSON lines (sweep --format json), not a CSV; expected "
                 "a trainsim sweep CSV (sweep --format csv, the default)")
        rows = list(csv.DictReader(lines))
    except OSError as e:
        fail(f"error: {args.csv}: cannot read the file ({e.strerror}); expected a trainsim "
                 "sweep CSV")
    except (csv.Error, UnicodeDecodeError) as e:
        fail(f"error: {args.csv}: not a CSV file ({e}); expected a trainsim sweep CSV")
    for column in filter(None, [args.x, args.y, args.series]):
        if rows and column not in rows[0]:
            fail(f"error: {args.csv}: no column '{column}'; expected one of "
                     f"{', '.join(rows[0].keys())}")
    check_rows(args.csv, rows, list(filter(None, [args.x, args.y])))
    points = defaultdict(lambda: defaultdict(list))
    ok_rows = [row for row in rows if row.get("status", "ok") == "ok"]
    for row in ok_rows:
        x, y = number(row[args.x]), number(row[args.y])
        if x is None or y is None:
            continue
        points[row[args.series] if args.series else ""][x].append(y)
    if not points:
        if ok_rows:
            # The rows ran, but no row has a number in both columns (a text column such as
            # "hardware", or empty cells): name the first cell that is not one.
            column, text = next((c, r[c]) for r in ok_rows for c in (args.x, args.y)
                                if number(r[c]) is None)
            fail(f"error: {args.csv}: no row with status ok has numbers in both --x '{args.x}' "
                 f"and --y '{args.y}' (column '{column}' holds '{text}'); expected numeric "
                 "columns")
        fail(f"error: {args.csv}: no simulated rows to plot; expected rows with status ok")
    if args.ideal and any(min(xs) <= 0 for xs in points.values()):
        fail(f"error: --ideal: column '{args.x}' has values <= 0; expected a positive x (GPUs, "
             "nodes, batch) to scale from")

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.backend_bases import FigureCanvasBase

    # The formats this matplotlib writes; a name without a suffix is written in its default.
    suffix = os.path.splitext(args.output)[1][1:].lower()
    formats = FigureCanvasBase.get_supported_filetypes()
    if suffix and suffix not in formats:
        fail(f"error: -o: '{args.output}' names no image format matplotlib writes; expected "
             f"one of .{', .'.join(sorted(formats))}, or no suffix")

    combine = {"max": max, "min": min, "mean": lambda v: sum(v) / len(v)}[args.agg]
    fig, ax = plt.subplots(figsize=(6.4, 4.0), dpi=100)

    def series_key(name):
        value = number(name)
        return (0, value, "") if value is not None else (1, 0.0, name)

    all_x = set()
    for name in sorted(points, key=series_key):
        xs = sorted(points[name])
        ys = [combine(points[name][x]) for x in xs]
        all_x.update(xs)
        label = f"{args.series} = {name}" if args.series else args.y
        line, = ax.plot(xs, ys, marker="o", label=label)
        if args.ideal and xs:
            ax.plot(xs, [ys[0] * x / xs[0] for x in xs], linestyle="--", color=line.get_color(),
                    alpha=0.6, label=f"ideal ({label})" if args.series else "ideal linear scaling")
    xs = sorted(all_x)
    doubling = len(xs) > 2 and all(b == 2 * a for a, b in zip(xs, xs[1:]))
    if args.logx or doubling:
        ax.set_xscale("log", base=2)
        ax.set_xticks(xs)
        ax.set_xticklabels([f"{x:g}" for x in xs])
    if args.logy:
        ax.set_yscale("log")
    ax.set_xlabel(args.x)
    ax.set_ylabel(args.y)
    if args.title:
        ax.set_title(args.title)
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    try:
        fig.savefig(args.output)
    except (OSError, ValueError) as e:
        fail(f"error: -o: cannot write '{args.output}' ({e}); expected a writable image path")
    return 0


if __name__ == "__main__":
    sys.exit(main())
