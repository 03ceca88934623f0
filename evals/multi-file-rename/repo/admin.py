import users


def admin():
    return users.fetch_user(0)
