"""The ranking screen's part in the semantic stage: background embedding, the typing pause,
and a status in the file list's border.

A mixin, so the screen's own module only calls three methods: `start_embedding` once the
workspace is open, `after_typing_pause` when the typing pauses, `show_semantic_status` when
an answer is shown. Keystrokes never wait for the model: a keystroke's ranking is fused only
from cached vectors; on a pause the question (and any re-ranked file without vectors) is
embedded in a worker, and then the question is ranked again, fused, on the keystroke path.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import work
from textual.worker import get_current_worker

from ctxtui.messages import SemanticProgressed, SemanticReady
from ctxtui.widgets.file_list import FileList
from ctxtui.workspace.semantic import is_fused, stage_of
from engine.model import Progress

if TYPE_CHECKING:
    from textual.message import Message

    from ctxtui.messages import Answer
    from ctxtui.workspace import WorkspaceAPI


class SemanticHook:
    """Mixed into the ranking screen (which provides the attributes declared here)."""

    workspace: WorkspaceAPI | None
    answer: Answer | None
    _generation: int
    _embedding: Progress | None = None

    if TYPE_CHECKING:

        def post_message(self, message: Message) -> bool: ...
        def request_rank(self) -> None: ...
        def file_list(self) -> FileList: ...

    def start_embedding(self, workspace: WorkspaceAPI) -> None:
        """Embed the whole repository in the background, the files on show first."""
        if stage_of(workspace) is None:
            return
        first = [f.file_id for f in self.answer.ranking.files] if self.answer else []
        self.run_embed(workspace, first)

    @work(thread=True, exclusive=True, group="embed", exit_on_error=False)
    def run_embed(self, workspace: WorkspaceAPI, first: list[int]) -> None:
        worker = get_current_worker()

        def report(progress: Progress) -> None:
            self.post_message(SemanticProgressed(progress))

        workspace.embed_all(
            on_progress=report,
            should_stop=lambda: worker.is_cancelled,
            first=first,
        )
        self.post_message(SemanticProgressed(Progress("embed", 0, 0), finished=True))

    def after_typing_pause(self, answer: Answer) -> None:
        """Embed what the answer on show lacks for a fused ranking, then rank it again."""
        stage = stage_of(self.workspace)
        workspace = self.workspace
        if stage is None or stage.failed or is_fused(answer.ranking) or not answer.query.strip():
            return
        if workspace is not None:
            self.run_semantic(workspace, answer)

    @work(thread=True, exclusive=True, group="semantic", exit_on_error=False)
    def run_semantic(self, workspace: WorkspaceAPI, answer: Answer) -> None:
        worker = get_current_worker()
        if (
            workspace.prepare_semantic(answer.ranking, lambda: worker.is_cancelled)
            and not worker.is_cancelled
        ):
            self.post_message(SemanticReady(answer.generation))

    def on_semantic_ready(self, message: SemanticReady) -> None:
        message.stop()
        if message.generation == self._generation:
            self.request_rank()  # fused now, from the cached vectors

    def on_semantic_progressed(self, message: SemanticProgressed) -> None:
        message.stop()
        self._embedding = None if message.finished else message.progress
        if self.answer is not None:
            self.show_semantic_status(self.answer)

    def show_semantic_status(self, answer: Answer) -> None:
        """Say in the file list's border whether meaning took part in the order on show."""
        stage = stage_of(self.workspace)
        if stage is None:
            return
        if not answer.query.strip():
            text = ""
        elif stage.failed:
            text = "words only: semantic model unavailable"
        elif is_fused(answer.ranking):
            text = "words + meaning"
        elif self._embedding is not None and self._embedding.total:
            text = f"words · embedding {self._embedding.done:,}/{self._embedding.total:,} files"
        else:
            text = "words · meaning after a pause"
        self.file_list().border_subtitle = text
