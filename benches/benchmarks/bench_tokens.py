"""asv: the token engine against tiktoken on the same inputs (run against the installed
package with ``asv run --python=same``; see benches/README.md)."""

from ctxfast import _tiktoken_ref, count_tokens, count_tokens_batch, truncate_to_tokens
from ctxfast.bench import naive_truncate, stdlib_sources
from ctxfast.harness.sections import ContextSection, assemble_context


class CountTokens:
    def setup(self):
        self.texts = stdlib_sources(limit=300)
        self.blob = "\n".join(self.texts)
        self.enc = _tiktoken_ref.get_encoding("cl100k_base")

    def time_ctxfast_single_string(self):
        count_tokens(self.blob)

    def time_tiktoken_single_string(self):
        len(self.enc.encode(self.blob, disallowed_special=()))

    def time_ctxfast_batch(self):
        count_tokens_batch(self.texts)

    def time_tiktoken_batch(self):
        self.enc.encode_ordinary_batch(self.texts)


class Truncate:
    def setup(self):
        words = "\n".join(stdlib_sources(limit=200)).split()[:50_000]
        self.section = " ".join(words)
        self.small = " ".join(words[:5_000])

    def time_ctxfast_50k_words(self):
        truncate_to_tokens(self.section, 4000)

    def time_naive_word_loop_5k_words(self):
        naive_truncate(self.small, 1000, " […]", count_tokens)


class Assemble:
    def setup(self):
        texts = stdlib_sources(limit=200)
        self.sections = [
            ContextSection(
                f"s{i}",
                texts[i % len(texts)][:4000],
                priority=i % 17,
                pinned=i < 3,
                truncatable=i % 2 == 0,
            )
            for i in range(200)
        ]

    def time_assemble_200_sections(self):
        assemble_context(self.sections, 24_000)
