"""Drafts copied from the prompt (``tapir.codegen.lookup``): what a draft is, and its length."""

from __future__ import annotations

from tapir.codegen.lookup import PromptLookup


def test_a_draft_is_what_followed_the_answers_last_tokens_in_the_prompt() -> None:
    prompt = [1, 2, 3, 4, 5, 6, 7, 8, 9]
    drafts = PromptLookup(prompt, first_draft=4)
    drafts.extend([0, 3, 4])
    assert drafts.draft() == [5, 6, 7, 8]
    assert drafts.draft(2) == [5, 6]  # never past the answer's token limit


def test_the_latest_occurrence_wins_and_the_longest_ngram_first() -> None:
    # "3 4" is followed by 5 in the document and by 9 in a failed script shown later: the later one
    drafts = PromptLookup([3, 4, 5, 5, 5, 1, 3, 4, 9, 9], first_draft=2)
    drafts.extend([3, 4])
    assert drafts.draft() == [9, 9]
    # with three tokens to go by, only the occurrence that matches all three counts
    drafts = PromptLookup([7, 3, 4, 5, 6, 1, 3, 4, 9, 9], first_draft=2)
    drafts.extend([7, 3, 4])
    assert drafts.draft() == [5, 6]


def test_nothing_is_drafted_without_a_match_of_two_tokens() -> None:
    drafts = PromptLookup([1, 2, 3, 4], first_draft=2)
    drafts.extend([9, 4])  # one token in common is too weak a reason to spend a batch
    assert drafts.draft() == []
    drafts.extend([1, 2])
    assert drafts.draft() == [3, 4]


def test_the_answer_itself_is_copied_from_once_it_repeats() -> None:
    drafts = PromptLookup([50, 51], first_draft=3)
    drafts.extend([10, 11, 12, 13, 10, 11])
    assert drafts.draft() == [12, 13, 10]


def test_the_draft_length_grows_with_taken_drafts_and_shrinks_with_refused_ones() -> None:
    drafts = PromptLookup(list(range(100)), first_draft=4, max_draft=16)
    drafts.feedback(4, 4)
    assert drafts.length == 8
    drafts.feedback(8, 8)
    drafts.feedback(16, 16)
    assert drafts.length == 16  # capped
    drafts.feedback(16, 2)
    assert drafts.length == 3  # what was taken, and one more
    drafts.feedback(3, 0)
    assert drafts.length == 1
    assert (drafts.drafted, drafts.accepted) == (4 + 8 + 16 + 16 + 3, 4 + 8 + 16 + 2 + 0)
