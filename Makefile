# The two set-up commands of the README. Both install what is missing first.
.PHONY: install up test

install:
	./scripts/install

up: install
	.venv/bin/fauxka up

test: install
	.venv/bin/python -m pytest
