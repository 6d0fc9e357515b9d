// kafkajs through the SSL and SASL_SSL listeners of a cluster laid out as kafkajs's own docker-compose
// file lays out its brokers (testHelpers/certs' JKS stores; PLAIN users test, bob, alice; SCRAM user
// testscram), with the client settings of kafkajs's testHelpers (sslConnectionOpts: its broker
// certificate as ca, servername localhost, rejectUnauthorized false; saslConnectionOpts and the SCRAM
// ones). The cases are those of kafkajs's SSL, SASL and ACL specs (src/broker/__tests__/connect.spec.js,
// src/producer/index.spec.js, src/admin/__tests__/*Acls.spec.js).
// Usage: node secure.js CONFIG_JSON   ({"ssl": [host:port...], "sasl": [...], "ca": path, "topic": name,
//                                     "cases": [name...] (optional: these only)})
// Prints one JSON line per case: {"case": name, ...} or {"case": name, "error": trace}.
'use strict'

const fs = require('fs')
const { Kafka, logLevel, AclResourceTypes, AclOperationTypes, AclPermissionTypes, ResourcePatternTypes } =
  require('kafkajs')

const config = JSON.parse(process.argv[2])
const ssl = { servername: 'localhost', rejectUnauthorized: false, ca: [fs.readFileSync(config.ca, 'utf-8')] }
const logCreator = () => ({ namespace, label, log }) => {
  process.stderr.write(`${label} [${namespace}] ${log.message}\n`)
}

function client (brokers, sasl) {
  return new Kafka({ clientId: 'fauxka-secure', brokers, ssl, sasl, logLevel: logLevel.NOTHING, logCreator,
                     connectionTimeout: 3000, retry: { retries: 2 } })
}

// kafkajs keeps its authenticator on the sasl object it is given (sasl.authenticationProvider, bound to
// those credentials): every client gets a new object
const USERS = {
  plain: { mechanism: 'plain', username: 'test', password: 'testtest' },
  'scram-sha-256': { mechanism: 'scram-sha-256', username: 'testscram', password: 'testtestscram=256' },
  'scram-sha-512': { mechanism: 'scram-sha-512', username: 'testscram', password: 'testtestscram=512' }
}

// a record sent and read back through the client's listener
async function roundTrip (kafka, value) {
  const producer = kafka.producer()
  await producer.connect()
  try {
    const [meta] = await producer.send({ topic: config.topic, messages: [{ value }] })
    const consumer = kafka.consumer({ groupId: `secure-${value}`, maxWaitTimeInMs: 100 })
    await consumer.connect()
    try {
      await consumer.subscribe({ topics: [config.topic], fromBeginning: true })
      const seen = await new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('no record within 30 s')), 30000)
        consumer.run({
          eachMessage: async ({ message }) => {
            if (message.value.toString() === value) { clearTimeout(timer); resolve(message.value.toString()) }
          }
        }).catch(reject)
      })
      return { offset: Number(meta.baseOffset), seen }
    } finally {
      await consumer.disconnect()
    }
  } finally {
    await producer.disconnect()
  }
}

async function failure (kafka) {
  const admin = kafka.admin()
  try {
    await admin.connect()
    await admin.listTopics()
    return null
  } catch (e) {
    return `${e.name}: ${e.message}`
  } finally {
    await admin.disconnect()
  }
}

function acl (principal, operation, permissionType) {
  return { resourceType: AclResourceTypes.TOPIC, resourceName: config.topic,
           resourcePatternType: ResourcePatternTypes.LITERAL, principal, host: '*', operation, permissionType }
}

async function acls () {
  const admin = client(config.sasl, { ...USERS.plain }).admin()
  await admin.connect()
  const deny = acl('User:bob', AclOperationTypes.WRITE, AclPermissionTypes.DENY)
  try {
    await admin.createAcls({ acl: [deny] })
    const described = await admin.describeAcls({ ...deny, resourcePatternType: ResourcePatternTypes.LITERAL })
    const bob = client(config.sasl, { mechanism: 'plain', username: 'bob', password: 'bobbob' }).producer()
    await bob.connect()
    let denied = null
    try {
      await bob.send({ topic: config.topic, messages: [{ value: 'from bob' }], acks: -1 })
    } catch (e) {
      let cause = e
      while (cause.cause && !cause.type) cause = cause.cause // KafkaJSNonRetriableError wraps the protocol error
      denied = cause.type || cause.name
    }
    const deleted = await admin.deleteAcls({ filters: [deny] })
    let after = null
    for (let attempt = 0; attempt < 50 && after === null; attempt++) { // the brokers learn the deletion by watches
      try {
        const [meta] = await bob.send({ topic: config.topic, messages: [{ value: 'from bob' }], acks: -1 })
        after = Number(meta.baseOffset)
      } catch (e) {
        await new Promise(resolve => setTimeout(resolve, 200))
      }
    }
    await bob.disconnect()
    return {
      described: described.resources.map(r => r.acls.map(a => [r.resourceName, a.principal, a.operation, a.permissionType])),
      denied,
      deleted: deleted.filterResponses.map(f => f.matchingAcls.map(a => [a.resourceName, a.principal])),
      written_after_delete: after !== null
    }
  } finally {
    await admin.disconnect()
  }
}

const CASES = {
  ssl: () => roundTrip(client(config.ssl), 'over-ssl'),
  ...Object.fromEntries(Object.entries(USERS).map(([name, user]) =>
    [`sasl-${name}`, () => roundTrip(client(config.sasl, { ...user }), `over-${name}`)])),
  ...Object.fromEntries(Object.entries(USERS).map(([name, user]) =>
    [`sasl-${name}-wrong`, async () => ({
      failure: await failure(client(config.sasl, { mechanism: user.mechanism, username: 'wrong', password: 'wrong' }))
    })])),
  acls
}

async function main () {
  const chosen = Object.entries(CASES).filter(([name]) => !config.cases || config.cases.includes(name))
  for (const [name, run] of chosen) { // one after another: the ACL case changes what bob may do
    const result = { case: name }
    try {
      Object.assign(result, await run())
    } catch (e) {
      result.error = `${e.name}: ${e.message}\n${e.stack}`
    }
    process.stdout.write(JSON.stringify(result) + '\n')
  }
}

main().then(() => process.exit(0), e => { console.error(e); process.exit(1) })
