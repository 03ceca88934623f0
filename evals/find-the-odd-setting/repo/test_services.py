import importlib
import unittest


class ServicesTest(unittest.TestCase):
    def test_retries(self):
        for i in range(30):
            module = importlib.import_module(f"services.svc{i:02}")
            self.assertEqual(module.RETRIES, 3, module.NAME)


if __name__ == "__main__":
    unittest.main()
