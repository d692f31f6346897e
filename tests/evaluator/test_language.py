"""Tests of evaluator.evidence.language.language_matches on page-like text in the benchmark's languages."""

from __future__ import annotations

import pytest

from evaluator.evidence.language import language_matches

ZH = ("欢迎使用我们的待办事项应用。在这里你可以添加新的任务，标记已完成的事项，"
      "并按照优先级进行排序。所有数据都会保存在浏览器中。")
EN = ("Welcome to your new task manager. Add all of your tasks with a due date, mark the ones you are done "
      "with, and filter the list to see what is left for this week.")
ES = ("Bienvenido a tu nueva lista de tareas. Aquí puedes añadir tareas con una fecha, marcar las que ya "
      "están hechas y ver por prioridad las que quedan para la semana. Todos los datos se guardan en el "
      "navegador y es muy fácil de usar.")
FR = ("Bienvenue dans votre nouvelle liste de tâches. Vous pouvez ajouter des tâches avec une date, marquer "
      "celles qui sont terminées et trier la liste pour voir ce qui reste pour la semaine. Les données sont "
      "enregistrées sur votre navigateur.")
DE = ("Willkommen in deiner neuen Aufgabenliste. Hier kannst du Aufgaben mit einem Datum anlegen, erledigte "
      "Aufgaben abhaken und die Liste nach Priorität sortieren. Die Daten werden im Browser gespeichert und "
      "sind nicht für andere sichtbar.")


@pytest.mark.parametrize("target", ["zh", "zh-CN", "zh-Hans"])
def test_chinese_text_matches_zh(target: str) -> None:
    assert language_matches(ZH, target) is True


def test_chinese_page_with_some_english_controls_still_matches_zh() -> None:
    page = f"{ZH}\nAdd\nDelete\nOK\n{ZH}"
    assert language_matches(page, "zh") is True


def test_english_text_does_not_match_zh() -> None:
    assert language_matches(EN, "zh") is False


def test_chinese_text_does_not_match_english() -> None:
    assert language_matches(ZH, "en") is False


@pytest.mark.parametrize(("text", "target"), [(ES, "es"), (FR, "fr"), (DE, "de"), (EN, "en"), (ES, "es-MX")])
def test_paragraph_matches_its_language(text: str, target: str) -> None:
    assert language_matches(text, target) is True


@pytest.mark.parametrize(("text", "target"), [(EN, "es"), (EN, "fr"), (EN, "de"), (ES, "fr"), (FR, "es"), (DE, "en")])
def test_paragraph_does_not_match_another_language(text: str, target: str) -> None:
    assert language_matches(text, target) is False


@pytest.mark.parametrize(
    ("text", "target"),
    [("", "zh"), ("Hello world", "en"), ("你好", "zh"), ("Hola, ¿qué tal?", "es"), ("Start  Reset  0:00", "de")],
)
def test_too_little_text_is_none(text: str, target: str) -> None:
    assert language_matches(text, target) is None


def test_long_text_without_function_words_is_none() -> None:
    menu = "Dashboard Revenue Analytics Settings Profile Logout Export Import Reports Widgets Calendar Inbox"
    assert sum(c.isalpha() for c in menu) >= 40
    assert language_matches(menu, "es") is None
