"""`reembed`: re-embed the store with another registered model in the background, with a progress
bar; resumable (run it again after Ctrl-C or a crash: only what is missing is embedded); search
keeps the old vectors until the new set is complete, then switches (engine/embedding/reembed.py).
`--list` the models, `--status` the store's model and any reembed in progress, `--cancel` one."""

from __future__ import annotations

import threading

import click

from engine.clock import iso

from .common import emit, fail, json_option, pass_ctx, progress_bar, table


def register(cli: click.Group) -> None:
    cli.add_command(reembed)


def _status_text(st) -> None:
    click.echo(f"vectors: {st.model} ({st.dim} floats)")
    if st.target:
        since = iso(st.since) if st.since else "?"
        click.echo(
            f"reembed to {st.target} ({st.target_dim}): {st.staged}/{st.total} staged,"
            f" started {since} by {st.by}; `memconsole reembed` resumes it"
        )


@click.command()
@click.option("--model", "model_id", default=None, help="The registered model to re-embed with (see --list).")
@click.option("--list", "listing", is_flag=True, help="The registered models; the store's is marked.")
@click.option("--status", "status", is_flag=True, help="The store's model and the reembed in progress.")
@click.option("--cancel", is_flag=True, help="Give up the reembed in progress (search is unchanged).")
@click.option(
    "--batch", type=click.IntRange(1, 4096), default=64, show_default=True, help="Memories per write."
)
@json_option
@pass_ctx
def reembed(ctx, model_id, listing, status, cancel, batch, as_json):
    """Re-embed every memory with another model, in the background; switch when complete."""
    if sum(map(bool, (listing, status, cancel))) > 1:
        fail("give one of --list, --status, --cancel")
    with ctx.engine(embedder=None) as eng:
        if listing:
            rows = eng.embedding.models()
            return emit(
                rows,
                as_json,
                lambda rs: table(
                    [
                        [
                            "*" if r["active"] else "",
                            r["id"],
                            r["dim"],
                            r["pooling"],
                            r["licence"],
                            r["source"],
                        ]
                        for r in rs
                    ],
                    ["", "id", "dim", "pooling", "licence", "source"],
                ),
            )
        if status:
            st = eng.embedding.status()
            return emit(st.as_dict(), as_json, lambda _: _status_text(st))
        if cancel:
            st = eng.embedding.cancel()
            return emit(st.as_dict(), as_json, lambda _: click.echo(f"cancelled; vectors stay {st.model}"))
        st = eng.embedding.status()
        if model_id is None and st.target is None:
            fail("name a model: memconsole reembed --model ID (memconsole reembed --list)")
        stop = threading.Event()
        seen = [0, 0]  # staged, total: written by the job's thread, read here

        def progress(staged: int, total: int) -> None:
            seen[:] = [staged, total]

        job = eng.embedding.run_in_background(model_id, batch=batch, progress=progress, stop=stop)
        bar, shown = None, 0
        try:
            while job.is_alive():
                job.join(0.2)
                if bar is None and seen[1] and not as_json:
                    bar = progress_bar(seen[1], f"reembed to {model_id or st.target}")
                    shown = 0
                if bar is not None and seen[0] > shown:
                    bar[0](seen[0] - shown)
                    shown = seen[0]
        except KeyboardInterrupt:
            stop.set()  # the batch in flight is written; the next run resumes after it
            job.join()
        finally:
            if bar is not None:
                bar[1]()
        if getattr(job, "error", None) is not None:
            fail(str(job.error), 1)
        st = job.result
        if as_json:
            return emit(st.as_dict(), True)
        if st.state == "switched":
            click.echo(f"switched: every memory's vector is now {st.model} ({st.dim} floats)")
        else:
            click.echo(f"interrupted at {st.staged}/{st.total}: run `memconsole reembed` again to resume")
            raise SystemExit(1)
