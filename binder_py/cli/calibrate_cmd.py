"""``binder-py calibrate``: fit a confidence calibrator on recorded dev runs."""

from __future__ import annotations

import argparse

from binder_py.cli.terminal import terminal_text


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "calibrate", help="fit a confidence calibrator on recorded dev runs (for --calibrator)",
        description="Fit P(right answer) from the features of each answered question's vote (vote share, margin, "
                    "agreement of distinct programs, the model's own scores, the share of programs that ran) on "
                    "run directories written by 'binder-py eval' on WikiTQ dev (never test), and write it as JSON "
                    "for 'binder-py ask/eval --calibrator FILE'. Prints the expected calibration error of the raw "
                    "vote share and of the calibrated confidence (leave-one-out) on the same questions.")
    parser.add_argument("runs", nargs="+", metavar="RUN_DIR", help="run directories (binder-py eval --out)")
    parser.add_argument("--out", required=True, metavar="FILE", help="where to write the calibrator (JSON)")
    parser.add_argument("--l2", type=float, default=1.0, help="the fit's L2 penalty (default 1)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from binder_py.errors import BinderError
    from binder_py.runs.calibrate import fit_from_runs
    from binder_py.safefiles import output_file

    if not 0 < args.l2 < float("inf"):  # the fit would fail with a traceback
        raise BinderError(f"--l2 is the fit's penalty, a finite number above 0, got {args.l2}")
    from binder_py.runs.records import run_files

    out = output_file(args.out, what="--out", example="calibrator.json",  # said before the fit, not after
                      reads=[f for run in args.runs for f in run_files(run)])
    fit = fit_from_runs(args.runs, l2=args.l2)
    try:
        fit.calibrator.save(out)
    except OSError as error:
        raise BinderError(f"--out {out}: cannot write the file ({error.strerror or error})") from None
    print(terminal_text(fit.summary()))  # it names the runs' models, from their config.json
    print(f"written to {args.out}")
    return 0
