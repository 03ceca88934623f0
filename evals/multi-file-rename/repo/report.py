from users import fetch_user


def report(uid):
    return fetch_user(uid)["name"]
