"""Every resolution kind (section 11.5), the lifecycle's stop rule (6.1) and the confirm and handle codes (11.6,
11.7), from the example intents and their demo data (Docs/DEMO-DATA.md)."""

from __future__ import annotations

import pytest

from cip import interaction

ANNA = {"displayName": "Anna Schmidt", "handle": "+49 30 5550101", "handleType": "phoneNumber",
        "customIdentifier": "contact-anna"}
JOHN_APPLESEED = {"displayName": "John Appleseed", "handle": "john.appleseed@example.com",
                  "handleType": "emailAddress", "customIdentifier": "contact-john-appleseed"}
JOHN_DOE = {"displayName": "John Doe", "handle": "+1 415 555 0102", "handleType": "phoneNumber",
            "customIdentifier": "contact-john-doe"}
KATE_BELL = {"displayName": "Kate Bell", "handle": "+1 415 555 0103", "handleType": "phoneNumber",
             "customIdentifier": "contact-kate-bell"}


def message(recipient=None, content="Running 5 minutes late", **extra):
    params = {"content": content, **extra}
    if recipient is not None:
        params["recipient"] = recipient
    return interaction("SendMessage", **params)


def payment(payee={"displayName": "Anna"}, amount="12.50", currency="EUR", **extra):
    params = dict(extra)
    if payee is not None:
        params["payee"] = payee
    if amount is not None:
        params["currencyAmount"] = {"amount": amount, "currencyCode": currency}
    return interaction("SendPayment", **params)


def ride(**params):
    return interaction("RequestRide", **params)


def workout(**params):
    return interaction("StartWorkout", **params)


def resolve(client, body):
    m = client.run(body["intent"]["type"], "resolve", body)
    assert (m.status, m.phase) == ("final", "resolve")
    return m.json


# -- each resolution kind ----------------------------------------------------------------------------------------


def test_success_writes_the_matched_contact_back(client):
    out = resolve(client, payment())
    assert out["resolve"]["payee"] == {"kind": "success", "value": ANNA}
    assert out["intent"]["parameters"]["payee"] == ANNA
    # 11.4: workers write amounts in their shortest form.
    assert out["resolve"]["currencyAmount"] == {"kind": "success", "value": {"amount": "12.5", "currencyCode": "EUR"}}


def test_success_by_custom_identifier_skips_name_matching(client):
    out = resolve(client, message({"displayName": "John", "customIdentifier": "contact-john-doe"}))
    assert out["resolve"]["recipient"] == {"kind": "success", "value": JOHN_DOE}


def test_not_required(client):
    out = resolve(client, message({"displayName": "Anna"}))
    assert out["resolve"]["attachments"] == {"kind": "notRequired"}
    out = resolve(client, ride(dropOffLocation={"name": "SFO"}))
    for name in ("pickupLocation", "rideOptionName", "partySize", "scheduledPickupTime"):
        assert out["resolve"][name] == {"kind": "notRequired"}, name
    out = resolve(client, workout(workoutName="yoga", isOpenEnded=True))
    assert out["resolve"]["goalValue"] == {"kind": "notRequired"}
    assert out["resolve"]["workoutGoalUnitType"] == {"kind": "notRequired"}


def test_needs_value(client):
    assert resolve(client, message(None))["resolve"]["recipient"] == {"kind": "needsValue"}
    assert resolve(client, payment(amount=None))["resolve"]["currencyAmount"] == {"kind": "needsValue"}
    assert resolve(client, ride())["resolve"]["dropOffLocation"] == {"kind": "needsValue"}
    assert resolve(client, workout())["resolve"]["workoutName"] == {"kind": "needsValue"}
    out = resolve(client, workout(workoutName="run", goalValue=5.0))
    assert out["resolve"]["workoutGoalUnitType"] == {"kind": "needsValue"}


def test_disambiguation(client):
    """Example 12.2: two equally likely Johns."""
    out = resolve(client, message({"displayName": "John"}))
    r = out["resolve"]["recipient"]
    assert r["kind"] == "disambiguation"
    assert sorted(r["options"], key=lambda p: p["displayName"]) == [JOHN_APPLESEED, JOHN_DOE]
    assert out["intent"]["parameters"]["recipient"] == {"displayName": "John"}  # not written back


def test_confirmation_required_is_written_back(client):
    out = resolve(client, message({"displayName": "Kate"}))
    assert out["resolve"]["recipient"] == {"kind": "confirmationRequired", "value": KATE_BELL}
    assert out["intent"]["parameters"]["recipient"] == KATE_BELL


@pytest.mark.parametrize("body,parameter,reason", [
    (message({"displayName": "Zed"}), "recipient", "noContactFound"),
    (payment(amount="20", currency="CHF"), "currencyAmount", "paymentsCurrencyUnsupported"),
    (payment(amount="10000.01", currency="USD"), "currencyAmount", "paymentsAmountAboveMaximum"),
    (payment(amount="0", currency="EUR"), "currencyAmount", "paymentsAmountBelowMinimum"),
    (ride(dropOffLocation={"name": "San Jose"}), "dropOffLocation", "outsideServiceArea"),
    (ride(dropOffLocation={"name": "Atlantis"}), "dropOffLocation", "unknownLocation"),
    (ride(dropOffLocation={"latitude": 38.2975, "longitude": -122.2869}), "dropOffLocation", "outsideServiceArea"),
    (ride(dropOffLocation={"name": "SFO"}, pickupLocation={"name": "Napa"}), "pickupLocation", "outsideServiceArea"),
    (ride(dropOffLocation={"name": "SFO"}, partySize=12), "partySize", "partySizeOutOfRange"),
    (ride(dropOffLocation={"name": "SFO"}, rideOptionName="Limousine"), "rideOptionName", "unknownRideOption"),
    (ride(dropOffLocation={"name": "SFO"}, scheduledPickupTime={"day": 3}), "scheduledPickupTime",
     "invalidPickupTime"),
    (workout(workoutName="run", goalValue=0.0, workoutGoalUnitType="mile"), "goalValue", "goalValueNotPositive"),
], ids=lambda v: v if isinstance(v, str) else None)
def test_unsupported_with_reason(client, body, parameter, reason):
    out = resolve(client, body)
    assert out["resolve"][parameter] == {"kind": "unsupported", "reason": reason}


def test_ride_resolution_writes_coordinates_and_canonical_names_back(client):
    out = resolve(client, ride(dropOffLocation={"name": "ferry building"}, rideOptionName="comfort", partySize=2,
                               scheduledPickupTime={"hour": 18, "minute": 30}))
    drop = out["resolve"]["dropOffLocation"]
    assert drop["kind"] == "success"
    assert (drop["value"]["latitude"], drop["value"]["longitude"]) == (37.7955, -122.3937)
    assert out["resolve"]["rideOptionName"] == {"kind": "success", "value": "Comfort"}
    assert out["resolve"]["partySize"] == {"kind": "success", "value": 2}


# -- the lifecycle stops at the first phase that needs the user (6.1) -------------------------------------------


@pytest.mark.parametrize("body,kind", [
    (message(None), "needsValue"),
    (message({"displayName": "John"}), "disambiguation"),
    (message({"displayName": "Kate"}), "confirmationRequired"),
    (message({"displayName": "Zed"}), "unsupported"),
])
def test_lifecycle_stops_after_resolve(client, body, kind):
    m = client.run("SendMessage", "lifecycle", body)
    assert (m.status, m.phase) == ("final", "resolve")
    assert set(m.json) == {"intent", "resolve"}
    assert m.json["resolve"]["recipient"]["kind"] == kind


def test_second_round_after_disambiguation_runs_the_whole_lifecycle(client):
    """Examples 12.2 and 12.3: the user picks an option; the client sends it as the recipient."""
    first = client.run("SendMessage", "lifecycle", message({"displayName": "John"}))
    choice = next(o for o in first.json["resolve"]["recipient"]["options"] if o["displayName"] == "John Appleseed")
    m = client.run("SendMessage", "lifecycle", message(choice))
    assert (m.status, m.phase) == ("final", "handle")
    assert m.json["resolve"]["recipient"] == {"kind": "success", "value": JOHN_APPLESEED}
    assert m.json["confirm"] == {"code": "ready"}
    assert m.json["handle"]["code"] == "success"
    assert m.json["handle"]["data"]["recipient"] == "contact-john-appleseed"
    assert m.json["handle"]["data"]["messageId"].startswith("msg-")


# -- confirm codes (11.6) ---------------------------------------------------------------------------------------


def test_confirm_ready_then_handle_success(client):
    m = client.run("SendPayment", "lifecycle", payment())
    assert (m.status, m.phase) == ("final", "handle")
    assert m.json["confirm"]["code"] == "ready"
    assert m.json["handle"]["code"] == "success"
    assert m.json["handle"]["data"]["transactionId"].startswith("txn-")


def test_confirm_intent_specific_failure_stops_the_lifecycle(client):
    """Example 12.4 (with 3000 EUR, above the demo balance of 2500)."""
    m = client.run("SendPayment", "lifecycle", payment(amount="3000"), deadline=5000)
    assert (m.status, m.phase) == ("final", "confirm")
    assert m.json["confirm"]["code"] == "failureInsufficientFunds"
    assert "handle" not in m.json
    assert m.json["intent"]["parameters"]["payee"] == ANNA


def test_confirm_failure_requiring_app_launch_has_a_user_activity(client):
    m = client.run("StartWorkout", "lifecycle", workout(workoutName="run", workoutLocationType="outdoor",
                                                        isOpenEnded=True))
    assert (m.status, m.phase) == ("final", "confirm")
    assert m.json["confirm"]["code"] == "failureRequiringAppLaunch"
    assert m.json["confirm"]["userActivity"]["activityType"] == "com.example.concierge.noLocationAvailable"


def test_confirm_failure_when_the_handler_throws(client):
    """5.11: a confirm handler that fails gives code failure with the message, outcome stop."""
    m = client.run("Echo", "lifecycle", interaction("Echo", text="x", delayPhase="confirm", failWith="no way"))
    assert (m.status, m.phase) == ("final", "confirm")
    assert m.json["confirm"]["code"] == "failure"
    assert "no way" in m.json["confirm"]["message"]


# -- handle codes (11.7) ----------------------------------------------------------------------------------------


def test_handle_continue_in_app_with_the_default_user_activity(client):
    """The example of 11.7: a StartWorkout handle answers continueInApp with the default activity."""
    body = workout(workoutName="yoga", isOpenEnded=True)
    m = client.run("StartWorkout", "lifecycle", body)
    assert (m.status, m.phase) == ("final", "handle")
    assert m.json["handle"]["code"] == "continueInApp"
    activity = m.json["handle"]["userActivity"]
    assert activity["activityType"] == "StartWorkout"
    assert activity["userInfo"]["interaction"]["intent"] == m.json["intent"]


def test_handle_success_of_a_ride(client):
    m = client.run("RequestRide", "lifecycle", ride(dropOffLocation={"name": "SFO"}, partySize=2))
    assert (m.status, m.phase) == ("final", "handle")
    assert m.json["confirm"]["code"] == "ready"
    assert m.json["handle"]["code"] == "success"
    assert m.json["handle"]["data"]["rideId"].startswith("ride-")


def test_handle_intent_specific_failure(client):
    """A handle request without a resolve (6.1: the broker does not check that earlier phases ran)."""
    m = client.run("RequestRide", "handle", ride(dropOffLocation={"name": "Napa", "latitude": 38.2975,
                                                                  "longitude": -122.2869}))
    assert (m.status, m.phase) == ("final", "handle")
    assert m.json["handle"]["code"] == "failureRequiringAppLaunchNoServiceInArea"


def test_handle_failure_when_the_handler_throws(client):
    m = client.run("Echo", "handle", interaction("Echo", text="x", failWith="disk full"))
    assert (m.status, m.phase) == ("final", "handle")
    assert m.json["handle"]["code"] == "failure"
    assert "disk full" in m.json["handle"]["message"]
