import unittest

import big


class BigTest(unittest.TestCase):
    def test_all(self):
        for i in range(1200):
            self.assertEqual(getattr(big, f"f{i}")(1), 1 + i, i)


if __name__ == "__main__":
    unittest.main()
