import Testing
@testable import TrellisCore

private func species(_ moisture: MoistureUse, minTemp: Double = 20) -> Species {
    Species(
        symbol: "X", scientificName: "X x", commonName: "x", moistureUse: moisture, shadeTolerance: .tolerant,
        minTempF: minTemp)
}

@Suite("Catalog: care texts and alerts")
struct CatalogCareTests {
    @Test(
        "watering interval from Moisture Use",
        arguments: [
            (MoistureUse.low, "every 2–3 weeks"), (.medium, "every 1–2 weeks"), (.high, "every 3–4 days")
        ])
    func watering(use: MoistureUse, phrase: String) {
        #expect(CareAdvice.watering(use).contains(phrase))
    }

    @Test(
        "light from Shade Tolerance",
        arguments: [
            (ShadeTolerance.tolerant, "shade"), (.intermediate, "part sun"), (.intolerant, "full sun")
        ])
    func light(tolerance: ShadeTolerance, phrase: String) {
        #expect(CareAdvice.light(tolerance).contains(phrase))
    }

    @Test(
        "cold sentence from the minimum temperature",
        arguments: [
            (-38.0, "Very hardy: survives winters down to -38 °F outdoors."),
            (7.0, "Hardy to 7 °F: survives a moderate winter outdoors, but not a severe one."),
            (28.5, "Frost-tender: bring it indoors before the temperature drops to 28.5 °F."),
            (45.0, "Keep it above 45 °F: a house plant in most climates.")
        ])
    func cold(minTemp: Double, sentence: String) {
        #expect(CareAdvice.cold(minTempF: minTemp) == sentence)
    }

    @Test(
        "moisture thresholds per Moisture Use",
        arguments: [
            (MoistureUse.high, 1, CareAlertKind?.some(.dry)), (.high, 4, .dry), (.high, 5, nil), (.high, 10, nil),
            (.medium, 2, .dry), (.medium, 3, nil), (.medium, 8, nil), (.medium, 9, .wet),
            (.low, 1, .dry), (.low, 2, nil), (.low, 6, nil), (.low, 7, .wet)
        ])
    func moisture(use: MoistureUse, moisture: Int, kind: CareAlertKind?) {
        let conditions = CareAlerts.evaluate(
            [CareReading(sensor: "0x36", moisture: moisture, temperature: 70)], species: species(use))
        #expect(conditions.map(\.kind) == (kind.map { [$0] } ?? []))
    }

    @Test(
        "cold below the minimum plus the margin",
        arguments: [
            (24.9, 5.0, true), (25.0, 5.0, false), (21.0, 0.0, false), (19.5, 0.0, true)
        ])
    func cold(temperature: Double, margin: Double, alert: Bool) {
        let conditions = CareAlerts.evaluate(
            [CareReading(sensor: "s", moisture: 5, temperature: temperature)],
            species: species(.medium, minTemp: 20), coldMargin: margin)
        #expect(
            conditions
                == (alert ? [CareCondition(kind: .cold, sensor: "s", value: temperature, limit: 20 + margin)] : []))
    }

    @Test("several sensors: sorted by sensor, dry before cold")
    func severalSensors() {
        let conditions = CareAlerts.evaluate(
            [
                CareReading(sensor: "b", moisture: 1, temperature: 10),
                CareReading(sensor: "a", moisture: 6, temperature: 70)
            ], species: species(.high))
        #expect(
            conditions == [
                CareCondition(kind: .dry, sensor: "b", value: 1, limit: 5),
                CareCondition(kind: .cold, sensor: "b", value: 10, limit: 25)
            ])
    }

    @Test(
        "plant names as topic levels",
        arguments: [
            ("Fern", "Fern"), ("a/b", "a%2Fb"), ("50%+#", "50%25%2B%23"), ("tab\there", "tab%09here"), ("Café", "Café")
        ])
    func topicLevel(name: String, level: String) {
        #expect(TopicLevelEncoding.encode(name) == level)
    }
}
