#!/usr/bin/env python3
"""Prints the signed-in user's profile from Supabase (GET /auth/v1/user with authd's token), and
again whenever authd reports USER_UPDATED. The app never sees a refresh token.

    SUPABASE_ANON_KEY=<anon key> PYTHONPATH=clients/python python3 Examples/python-profile/profile.py [PROFILE]
"""
import json
import os
import sys
import urllib.request

import authd_client


def print_profile(client: authd_client.Client, anon_key: str) -> None:
    token = client.token(min_validity=30)
    request = urllib.request.Request(client.status()["server"] + "/auth/v1/user",
                                     headers={"Authorization": token.authorization, "apikey": anon_key})
    with urllib.request.urlopen(request, timeout=15) as response:
        user = json.load(response)
    metadata = json.dumps(user.get("user_metadata") or {}, sort_keys=True, separators=(",", ":"))
    print(f"user {user.get('email', '-')} id={user.get('id', '-')} metadata={metadata}", flush=True)


def main() -> int:
    anon_key = os.environ.get("SUPABASE_ANON_KEY")
    if not anon_key:
        print("profile.py: set SUPABASE_ANON_KEY to the project's anon (publishable) key", file=sys.stderr)
        return 1
    try:
        client = authd_client.connect(profile=sys.argv[1] if len(sys.argv) > 1 else None)
        print_profile(client, anon_key)
        for event in client.events():
            if event.name == "USER_UPDATED":
                print_profile(client, anon_key)
    except authd_client.AuthdError as error:
        print(f"profile.py: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
