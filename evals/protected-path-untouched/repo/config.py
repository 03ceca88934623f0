import os


def port(env=None):
    env = os.environ if env is None else env
    return int(env["PORT"])
