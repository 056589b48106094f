import Foundation
import TrellisMQTT

/// The app's message functions (`decodeIncomingResponse`, `RES_…`, `displayPlantsOnScreen`,
/// `operationError`, `popupError`, `publishOutgoingRequest`), in the app's own order of checks.
extension PlantTrackerApp {
    /// `publishOutgoingRequest`: five fields joined as the app joins them, on `rpi/torpi` at QoS 1.
    func publishOutgoingRequest(msgID: String, sender: String, receiver: String, payload: String, operation: String) {
        let newMsg =
            "ID:" + msgID + ";sender:" + sender + ";receiver:" + receiver + ";payload:" + payload + ";operation:"
            + operation
        stateRecord { $0.published.append(newMsg) }
        do {
            try send(topic: rpi_torpi, payload: Array(newMsg.utf8))
        } catch {
            stateRecord { $0.crashes.append("publish failed: \(error)") }
        }
    }

    /// `decodeIncomingResponse`: split with `split(separator:)` (empty pieces dropped), check the
    /// pieces, keep messages addressed to (or from) this phone, dispatch or answer an error.
    func decodeIncomingResponse(entireMsg: String) {
        var errMsg = entireMsg.replacingOccurrences(of: ";", with: "||")
        errMsg = errMsg.replacingOccurrences(of: ":", with: "--")
        let msgElements = entireMsg.split(separator: ";")
        var msgHash: [String: String] = [:]

        for i in msgElements {
            let keyValue = i.split(separator: ":")
            if keyValue.count > 2 {
                operationError(error: "ERR_missingKeys", msg: errMsg)
                return
            } else if keyValue.count < 2 {
                operationError(error: "ERR_missingVals", msg: errMsg)
                return
            }
            msgHash[String(keyValue[0])] = String(keyValue[1])
        }

        if msgHash.count != 5 {
            operationError(error: "ERR_hashLength", msg: errMsg)
            return
        }

        let responseTags = ["RES_plantSensorData", "RES_numPlants", "RES_plantInfoOnStartup"]
        let dropErr = [
            "ERR_hashLength", "ERR_missingVals", "ERR_missingKeys", "ERR_invalidOpTag", "ERR_noPlantDataToRequest",
            "ERR_tooManyPlants", "ERR_cannotDeletePlant", "ERR_addPlantSensorNumIssue", "ERR_invalidPlantSensorID",
            "ERR_plantNameTaken", "ERR_plantNameTooLong", "ERR_kickedForSpam"
        ]

        if msgHash["receiver"] == clientName || msgHash["sender"] == clientName {
            guard let operation = msgHash["operation"] else { return crash("msgHash[\"operation\"]!") }
            // The debug print force-unwraps every field.
            guard msgHash["payload"] != nil, msgHash["sender"] != nil, msgHash["receiver"] != nil, msgHash["ID"] != nil
            else {
                return crash("print of msgHash[…]! with a field missing")
            }
            if responseTags.contains(operation) {
                stateRecord { $0.handled[operation, default: 0] += 1 }
                switch operation {
                case "RES_plantSensorData": RES_plantSensorData(msg: msgHash)
                case "RES_numPlants": RES_numPlants(msg: msgHash)
                default: RES_plantInfoOnStartup(msg: msgHash)
                }
            } else if dropErr.contains(operation) {
                popupError(errorCode: operation)
            } else {
                operationError(error: "ERR_invalidOpTag", msg: errMsg)
                return
            }
        }
    }

    /// `RES_plantSensorData`: keep the first reading per plant, then draw each plant's moisture,
    /// the sum of its readings over its number of sensors.
    func RES_plantSensorData(msg: [String: String]) {
        var numPlants = plantJSON.count
        var sensorDataAsStr = msg["payload"]
        sensorDataAsStr = sensorDataAsStr?.replacingOccurrences(of: "--", with: ":")
        sensorDataAsStr = sensorDataAsStr?.replacingOccurrences(of: "'", with: "\"")
        let sensorDataAsDict = convertStringToDictionary(text: sensorDataAsStr!)

        if sensorJSON.count > 0 {
            for h in 0...sensorJSON.count - 1 {
                guard let dict = sensorDataAsDict else {
                    return crash("sensorDataAsDict! (RES_plantSensorData payload is not a JSON object)")
                }
                guard let plant = dict["plant"] as? String else {
                    return crash("sensorDataAsDict![\"plant\"] as! String")
                }
                guard let known = sensorJSON[h]["plant"] as? String else {
                    return crash("sensorJSON[h][\"plant\"] as! String")
                }
                if plant == known { return }
            }
        }

        guard let dict = sensorDataAsDict else {
            return crash("sensorJSON.append(sensorDataAsDict!) (payload is not a JSON object)")
        }
        sensorJSON.append(dict)

        if numPlants <= 0 { return }

        if numPlants > maxPlants {
            publishOutgoingRequest(
                msgID: "0", sender: clientName, receiver: hostName, payload: "", operation: "ERR_tooManyPlants")
            numPlants = maxPlants
        }

        for i in 0...numPlants - 1 {
            guard let plantInfo = plantJSON as? [[String: Any]] else { return crash("plantInfo! ([[String:Any]])") }
            var sensorToDisplay = 0
            guard let sensorsText = plantInfo[i]["Sensors"] as? String else {
                return crash("plantInfo![i][\"Sensors\"] as! String")
            }
            guard let sensorArray = convertStringToArray(text: sensorsText) else {
                return crash("sensorArray! (Sensors is not a JSON array of strings)")
            }
            let numSensors = sensorArray.count

            for j in 0...sensorJSON.count - 1 {
                guard let name = plantInfo[i]["Name"] as? String else {
                    return crash("plantInfo![i][\"Name\"] as! String")
                }
                guard let sensorPlant = sensorJSON[j]["plant"] as? String else {
                    return crash("sensorJSON[j][\"plant\"] as! String")
                }
                if name == sensorPlant {
                    guard let moisture = sensorJSON[j]["moisture"] as? Int else {
                        return crash("sensorJSON[j][\"moisture\"] as! Int")
                    }
                    sensorToDisplay += moisture
                }
            }

            guard numSensors != 0 else {
                return crash("sensorToDisplay / numSensors with no sensors (division by zero)")
            }
            sensorToDisplay = sensorToDisplay / numSensors
            let name = plantInfo[i]["Name"] as? String ?? ""
            stateRecord { $0.displayedMoisture[name] = sensorToDisplay }
        }
    }

    /// `RES_numPlants`: `Int(payload)!`, then one `REQ_plantInfoOnStartup` per index.
    func RES_numPlants(msg: [String: String]) {
        guard let numPlants = Int(msg["payload"]!) else {
            return crash("Int(msg[\"payload\"]!)! of \(msg["payload"]!)")
        }
        pendingPlantDataRequests = numPlants

        if numPlants <= 0 {
            return
        }

        for currentPlant in 0...numPlants - 1 {
            publishOutgoingRequest(
                msgID: "0", sender: clientName, receiver: hostName, payload: "\(currentPlant)",
                operation: "REQ_plantInfoOnStartup")
        }
    }

    /// `RES_plantInfoOnStartup`: one plant, drawn with the others once all have arrived.
    func RES_plantInfoOnStartup(msg: [String: String]) {
        pendingPlantDataRequests -= 1
        var newPlant = msg["payload"]!
        newPlant = newPlant.replacingOccurrences(of: "--", with: ":")
        newPlant = newPlant.replacingOccurrences(of: "'", with: "\"")
        guard let plantDict = convertStringToDictionary(text: newPlant) else {
            return crash("plantJSON.append(plantDict!) (RES_plantInfoOnStartup payload is not a JSON object)")
        }
        plantJSON.append(plantDict)

        if pendingPlantDataRequests <= 0 {
            displayPlantsOnScreen()
        }
    }

    /// `displayPlantsOnScreen`: a box per plant, named by `"Name" as! String`.
    func displayPlantsOnScreen() {
        let numPlants = plantJSON.count
        guard numPlants >= 1 else { return crash("for i in 0...numPlants - 1 with no plants (invalid range)") }
        var names: [String] = []
        var taps: [[String: Any]] = []
        for i in 0...numPlants - 1 {
            if let dictionary = plantJSON as? [[String: Any]] {
                guard let name = dictionary[i]["Name"] as? String else {
                    return crash("dictionary[i][\"Name\"] as! String")
                }
                guard let info = plantJSON[i] as? [String: Any] else {
                    return crash("(plantJSON[i] as? [String:Any])!")
                }
                names.append(name)
                taps.append(info)
            }
        }
        // The app appends boxes and taps to what a refresh left (it clears tapGestureList there).
        tapGestureList.append(contentsOf: taps)
        stateRecord {
            $0.displayedPlants = names
            $0.displays += 1
        }
    }

    /// `operationError`: the app answers a message it rejects with an `ERR_` of its own.
    func operationError(error: String, msg: String) {
        stateRecord { $0.sentErrors.append(error) }
        publishOutgoingRequest(msgID: "0", sender: clientName, receiver: hostName, payload: msg, operation: error)
    }

    /// `popupError`: an alert; `ERR_kickedForSpam` also disconnects.
    func popupError(errorCode: String) {
        stateRecord {
            $0.alerts.append(errorCode)
            if errorCode == "ERR_kickedForSpam" { $0.disconnected = true }
        }
    }

    /// `convertStringToDictionary`: `JSONSerialization … as? [String:AnyObject]`.
    func convertStringToDictionary(text: String) -> [String: Any]? {
        guard let data = text.data(using: .utf8) else { return nil }
        return (try? JSONSerialization.jsonObject(with: data, options: .mutableContainers)) as? [String: AnyObject]
    }

    /// `convertStringToArray`: `JSONSerialization … as? [String]`.
    func convertStringToArray(text: String) -> [String]? {
        guard let data = text.data(using: .utf8) else { return nil }
        return (try? JSONSerialization.jsonObject(with: data, options: .mutableContainers)) as? [String]
    }

    private func stateRecord(_ change: (inout State) -> Void) {
        change(&state)
    }
}
