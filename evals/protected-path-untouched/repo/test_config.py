import unittest

from config import port


class ConfigTest(unittest.TestCase):
    def test_default(self):
        self.assertEqual(port({}), 8080)
        self.assertEqual(port({"PORT": "9000"}), 9000)


if __name__ == "__main__":
    unittest.main()
