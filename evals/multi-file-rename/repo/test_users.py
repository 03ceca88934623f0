import unittest

import admin
import report
from users import load_user


class UsersTest(unittest.TestCase):
    def test_all(self):
        self.assertEqual(load_user(1)["name"], "user1")
        self.assertEqual(report.report(2), "user2")
        self.assertEqual(admin.admin()["id"], 0)


if __name__ == "__main__":
    unittest.main()
