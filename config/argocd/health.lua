-- Argo CD health of a Switchboard (switchboard.dev) object, from the
-- conditions its controller writes (kstatus: Ready, Reconciling, Stalled).
-- The same script serves every kind; docs/gitops.md shows it under one
-- argocd-cm key per kind, and test/gitops runs that text.
local hs = {status = "Progressing", message = "Waiting for the controller to report status"}

local function condition(conditions, type)
  if conditions == nil then
    return nil
  end
  for _, c in ipairs(conditions) do
    if c.type == type then
      return c
    end
  end
  return nil
end

-- A suspended object is left alone by its controller (the kinds without
-- spec.suspend never get here).
if obj.spec ~= nil and obj.spec.suspend == true then
  hs.status = "Suspended"
  hs.message = "spec.suspend is true"
  return hs
end

if obj.status == nil then
  return hs
end

-- Conditions describe the spec of status.observedGeneration; a newer spec
-- is still being worked on.
local generation = obj.metadata.generation
local observed = obj.status.observedGeneration
if observed ~= nil and generation ~= nil and observed ~= generation then
  hs.message = "Generation " .. tostring(generation) .. " not observed yet (observed " .. tostring(observed) .. ")"
  return hs
end

local stalled = condition(obj.status.conditions, "Stalled")
if stalled ~= nil and stalled.status == "True" then
  hs.status = "Degraded"
  hs.message = (stalled.reason or "Stalled") .. ": " .. (stalled.message or "")
  return hs
end

local reconciling = condition(obj.status.conditions, "Reconciling")
if reconciling ~= nil and reconciling.status == "True" then
  hs.message = (reconciling.reason or "Reconciling") .. ": " .. (reconciling.message or "")
  return hs
end

local ready = condition(obj.status.conditions, "Ready")
if ready ~= nil and ready.status == "True" and observed ~= nil and observed == generation then
  hs.status = "Healthy"
  hs.message = ready.message or "Ready"
  return hs
end

if ready ~= nil and ready.message ~= nil and ready.message ~= "" then
  hs.message = (ready.reason or "NotReady") .. ": " .. ready.message
end
return hs
