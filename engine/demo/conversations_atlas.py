"""The demo's coding assistant (atlas): its conversations with the platform team."""

# Demo prose: one line per message reads better than strings split for width.
# ruff: noqa: E501

from engine.demo.shapes import Conversation

ATLAS: list[Conversation] = [
    (
        "atlas",
        "dana",
        "cli",
        "Set up the editor and terminal",
        [
            ("user", "I like dark mode in every editor I use, and please keep the font at 14pt.", None),
            (
                "assistant",
                "Noted: dark theme everywhere and a 14pt font. Want me to apply it to VS Code and the terminal now?",
                None,
            ),
            (
                "tool",
                "Updated settings.json: workbench.colorTheme = 'One Dark Pro', editor.fontSize = 14",
                "edit_file",
            ),
            ("user", "Yes, and use JetBrains Mono.", None),
            ("assistant", "Done. VS Code and kitty now use JetBrains Mono 14pt on One Dark Pro.", None),
        ],
        [
            ("The user prefers dark mode in every editor", "semantic", "preference", 0.8),
            ("Dana's editor font is JetBrains Mono at 14pt", "semantic", "preference", 0.6),
        ],
    ),
    (
        "atlas",
        "dana",
        "cli",
        "Migrate CI from Jenkins to GitHub Actions",
        [
            ("user", "We're dropping Jenkins. Move the build and test jobs to GitHub Actions.", None),
            (
                "assistant",
                "I'll port the Jenkinsfile stages: lint, unit tests, integration tests, image build.",
                None,
            ),
            ("tool", "Created .github/workflows/ci.yml with 4 jobs; matrix python 3.11/3.12", "write_file"),
            ("user", "Integration tests need the Postgres service container, don't mock it.", None),
            (
                "assistant",
                "Added a postgres:16 service container with a health check; integration tests now run against it.",
                None,
            ),
            ("user", "Good. We decided: no more Jenkins after March 31.", None),
        ],
        [
            (
                "Decision: Jenkins is retired after March 31; CI runs on GitHub Actions",
                "semantic",
                "decision",
                0.9,
            ),
            (
                "Integration tests must run against a real Postgres service container, never mocks",
                "procedural",
                "learning",
                0.8,
            ),
            (
                "CI workflow lives in .github/workflows/ci.yml with lint, unit, integration and image jobs",
                "semantic",
                "fact",
                0.5,
            ),
        ],
    ),
    (
        "atlas",
        "dana",
        "cli",
        "Flaky integration test in payments",
        [
            ("user", "test_refund_idempotency fails one run in five. Find out why.", None),
            (
                "tool",
                "pytest -k refund_idempotency --count 50: 9 failures, all with 'duplicate key value violates unique constraint'",
                "run_tests",
            ),
            (
                "assistant",
                "The test reuses a fixed idempotency key across parallel workers. With pytest-xdist two workers collide.",
                None,
            ),
            ("user", "Fix it by generating the key per test.", None),
            ("assistant", "Switched to uuid4 keys per test; 200 consecutive runs pass.", None),
        ],
        [
            (
                "Flaky refund test was caused by a shared idempotency key under pytest-xdist; keys are now per-test uuid4",
                "episodic",
                "discovery",
                0.6,
            ),
            ("Generate idempotency keys per test when tests run in parallel", "procedural", "learning", 0.7),
        ],
    ),
    (
        "atlas",
        "lee",
        "slack",
        "Release checklist for v2.4",
        [
            ("user", "What's left before we tag v2.4?", None),
            (
                "assistant",
                "Changelog, the migration dry-run on staging, and sign-off from the payments team.",
                None,
            ),
            ("user", "Do the staging dry-run now.", None),
            (
                "tool",
                "alembic upgrade head --sql against staging snapshot: 3 migrations, no locks over 2s",
                "run_command",
            ),
            (
                "assistant",
                "Dry-run clean: three migrations, longest lock 1.4 s. Remaining: changelog and payments sign-off.",
                None,
            ),
        ],
        [
            (
                "Task: v2.4 release still needs the changelog and payments team sign-off",
                "episodic",
                "task",
                0.7,
            ),
            (
                "Always dry-run database migrations against a staging snapshot before tagging a release",
                "procedural",
                "learning",
                0.8,
            ),
        ],
    ),
    (
        "atlas",
        "lee",
        "slack",
        "Proposal to adopt a monorepo",
        [
            ("user", "Should we move all services into one monorepo with Bazel?", None),
            (
                "assistant",
                "It would unify builds but Bazel migration is months of work for a team of five.",
                None,
            ),
            ("user", "Agreed, the team said no. Don't bring Bazel up again.", None),
        ],
        [
            (
                "The team rejected moving to a Bazel monorepo; do not propose it again",
                "semantic",
                "rejected",
                0.9,
            ),
        ],
    ),
    (
        "atlas",
        "dana",
        "cli",
        "Speed up the Docker build",
        [
            ("user", "The image build takes 11 minutes. Can you get it under 4?", None),
            (
                "tool",
                "docker buildx build --progress=plain: 7m40s spent in pip install (no cache mount)",
                "run_command",
            ),
            (
                "assistant",
                "Pip reinstalls everything each build. I'll add a cache mount and order layers so requirements come first.",
                None,
            ),
            (
                "tool",
                "Rebuilt with --mount=type=cache,target=/root/.cache/pip: 3m12s cold, 48s warm",
                "run_command",
            ),
            ("assistant", "Now 3m12s cold and 48s warm.", None),
        ],
        [
            (
                "Docker builds use a pip cache mount and copy requirements before source; cold build 3m12s",
                "semantic",
                "discovery",
                0.5,
            ),
        ],
    ),
]
