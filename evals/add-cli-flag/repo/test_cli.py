import contextlib
import io
import unittest

from cli import main


class CliTest(unittest.TestCase):
    def test_greets(self):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            main(["ann"])
        self.assertEqual(out.getvalue(), "hello ann\n")


if __name__ == "__main__":
    unittest.main()
