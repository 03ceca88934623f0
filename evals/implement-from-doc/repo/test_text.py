import unittest

from text import slugify


class SlugifyTest(unittest.TestCase):
    def test_examples(self):
        self.assertEqual(slugify("Hello, World!"), "hello-world")
        self.assertEqual(slugify("  Rust 2024 -- edition "), "rust-2024-edition")
        self.assertEqual(slugify("---"), "")


if __name__ == "__main__":
    unittest.main()
