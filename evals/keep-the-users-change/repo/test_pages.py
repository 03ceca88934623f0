import unittest

from pages import page_count


class PagesTest(unittest.TestCase):
    def test_counts(self):
        self.assertEqual(page_count(10, 5), 2)
        self.assertEqual(page_count(11, 5), 3)
        self.assertEqual(page_count(0, 5), 0)


if __name__ == "__main__":
    unittest.main()
