def fetch_user(uid):
    return {"id": uid, "name": f"user{uid}"}
